"""Whether a served page holds every word that an independent reader finds on it.

A page's served text (its Level 2 Markdown, with any table preview cut at Level 2 read whole
at Level 3) is compared with what another program reads on the same page of the same file:
poppler's `pdftotext` for a pdf's text layer, and PDFium's own page text
(`FPDFText_GetText`, without the extractor's layout) as a second reader. A web page's is
compared with the text a browser shows of it (`browser_text`: lxml's `text_content()`).

Both sides are normalised the same way: NFKC; a word hyphenated at a line end (`-`, a soft
hyphen, U+2010 or PDFium's U+FFFE before the line break) joined; soft hyphens and tatweel
removed; then the distinct lowercased words of two or more letters. Scripts written without
spaces (Han, kana) count by pairs of neighbouring characters, so a line break, which
pdftotext keeps and a paragraph does not, changes no word. Digits and punctuation are not
words: numbers are checked by the format tests, where their order is known.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from dpe_server.model.tree import Page
from dpe_server.model.uri import parse
from dpe_server.views.payloads import element_view, page_view, preview_content
from dpe_server.views.render import render

_XML_ENCODING = re.compile(rb"\s*<\?xml[^>]*?encoding=[\"']([A-Za-z0-9._-]+)")
_HYPHENATED = re.compile(r"(\w)[-\u00ad\u2010\ufffe][ \t]*\r?\n\s*(\w)")
_WORD = re.compile(r"[^\W\d_]{2,}")
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
PDFTOTEXT_TIMEOUT_S = 120.0
OVERALL = 0.998
"""The share of all the words of a corpus that must be served."""
EVERY_PAGE = 0.97
"""The share of every page's words that must be served."""


def words(text: str) -> set[str]:
    """The distinct words of `text`, normalised as the module doc says."""
    text = unicodedata.normalize("NFKC", text)
    text = _HYPHENATED.sub(r"\1\2", text)
    text = text.replace("\u00ad", "").replace("\u0640", "").replace("\ufffe", "-")
    out: set[str] = set()
    for word in _WORD.findall(text):
        spaced = _UNSPACED.sub(" ", word)
        out.update(w.lower() for w in spaced.split() if len(w) > 1)
        for run in _UNSPACED.findall(word):
            out.update(run[i : i + 2] for i in range(len(run) - 1))
    return out


@dataclass(frozen=True)
class PageWords:
    """One page: how many words the reader found, and those the served page lacks."""

    page_index: int
    found: int
    missing: tuple[str, ...]

    @property
    def recall(self) -> float:
        return 1.0 if not self.found else (self.found - len(self.missing)) / self.found


def compare(page_index: int, reference: str, served: str) -> PageWords:
    """The words of `reference` (another reader's text of the page) missing from `served`."""
    expected = words(reference)
    return PageWords(page_index, len(expected), tuple(sorted(expected - words(served))))


def located(word: str, reference: str, around: int = 6) -> str:
    """The words of `reference` around the first place `word` (one of `words(reference)`) is
    read in it: where a served document was expected to say it."""
    text = unicodedata.normalize("NFKC", _HYPHENATED.sub(r"\1\2", reference))
    text = text.replace("\u00ad", "").replace("\u0640", "")
    bounded = r"(?<![^\W\d_])" + re.escape(word) + r"(?![^\W\d_])"
    found = re.search(bounded, text, re.I) or re.search(re.escape(word), text, re.I)
    if found is None:
        return word
    head = text[: found.start()].split()
    tail = text[found.end() :].split()
    glued_before = head.pop() if head and not text[found.start() - 1].isspace() else ""
    glued_after = tail.pop(0) if tail and not text[found.end()].isspace() else ""
    middle = glued_before + text[found.start() : found.end()] + glued_after
    return " ".join([*head[-around:], middle, *tail[:around]])


def overall(pages: Sequence[PageWords]) -> float:
    """The share of all the pages' words that were found on the served pages."""
    found = sum(p.found for p in pages)
    missing = sum(len(p.missing) for p in pages)
    return 1.0 if not found else (found - missing) / found


def served_text(page: Page) -> str:
    """What a client reads of `page`: its Level 2 Markdown, and the whole of every element
    whose Level 2 preview was cut, at Level 3."""
    payload = page_view("h", "d", page, parse(f"dpe://h/d/pages/{page.page_index}"))
    parts = [render(2, payload, "markdown")]
    for element in page.elements:
        if preview_content(element).get("rows_truncated"):
            whole = element_view("h", "d", page.page_index, element)
            parts.append(render(3, whole, "markdown"))
    return "\n\n".join(parts)


def served_document(pages: Sequence[Page]) -> str:
    """What a client reads of all the pages of a document (`served_text` of each)."""
    return "\n\n".join(served_text(page) for page in pages)


def pdftotext_available() -> bool:
    return shutil.which("pdftotext") is not None


def pdftotext_pages(path: Path, password: str = "") -> list[str]:
    """The text of each page of the pdf at `path` as poppler's `pdftotext` reads it (its
    default reading order, UTF-8). Raises `OSError` when pdftotext is not installed and
    `subprocess.CalledProcessError` when it cannot read the file."""
    command = ["pdftotext", "-q", "-enc", "UTF-8"]
    if password:
        command += ["-upw", password]
    done = subprocess.run(
        [*command, str(path), "-"],
        capture_output=True,
        check=True,
        timeout=PDFTOTEXT_TIMEOUT_S,
    )
    pages = done.stdout.decode("utf-8", "replace").split("\f")
    return pages[:-1] if pages and not pages[-1].strip() else pages


_BROWSER_HIDDEN = (
    "//script | //style | //template | //*[@hidden] | //*[@aria-hidden='true'] | "
    "//input[@type='hidden'] | //*[contains(translate(@style, ' ', ''), 'display:none')]"
)
_BROWSER_BLOCKS = frozenset(
    {
        "address",
        "article",
        "aside",
        "blockquote",
        "br",
        "caption",
        "dd",
        "details",
        "div",
        "dl",
        "dt",
        "figcaption",
        "figure",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hr",
        "li",
        "main",
        "nav",
        "ol",
        "option",
        "p",
        "pre",
        "section",
        "summary",
        "table",
        "td",
        "th",
        "tr",
        "ul",
    }
)


def _archive_html(data: bytes) -> bytes:
    """The HTML part of a web archive (MHTML), as UTF-8."""
    import email
    import email.policy

    for part in email.message_from_bytes(data, policy=email.policy.compat32).walk():
        if part.get_content_type() == "text/html":
            payload = part.get_payload(decode=True)
            charset = part.get_content_charset() or "utf-8"
            if isinstance(payload, bytes):
                return payload.decode(charset, "replace").encode()
    return b""


def browser_text(data: bytes) -> str:
    """The text a browser shows of an HTML page (a web archive's HTML part): lxml's
    `text_content()` of `<body>` less scripts, styles and hidden elements, with a space
    where a block begins and ends (where a browser breaks the line). The page is read as
    UTF-8 when it is, else as lxml's parser reads its declared charset."""
    import lxml.html

    if b"mime-version:" in data[:4096].lower():
        data = _archive_html(data)
    try:
        text = data.decode("utf-8-sig")
        parser = lxml.html.HTMLParser(encoding="utf-8")
        root = lxml.html.document_fromstring(text.encode(), parser)
    except UnicodeDecodeError:
        declared = _XML_ENCODING.match(data)
        try:
            text = data.decode(declared[1].decode("ascii")) if declared else ""
        except (LookupError, UnicodeDecodeError):
            text = ""
        if text:
            parser = lxml.html.HTMLParser(encoding="utf-8")
            root = lxml.html.document_fromstring(text.encode(), parser)
        else:
            root = lxml.html.document_fromstring(data)
    body = root.find("body")
    if body is None:
        return ""
    for gone in list(body.xpath(_BROWSER_HIDDEN)):  # type: ignore[arg-type]
        gone.drop_tree()  # type: ignore[union-attr]
    for el in body.iter():
        if isinstance(el.tag, str) and el.tag.lower() in _BROWSER_BLOCKS:
            el.text = " " + (el.text or "")
            el.tail = " " + (el.tail or "")
    return str(body.text_content())  # type: ignore[attr-defined]
