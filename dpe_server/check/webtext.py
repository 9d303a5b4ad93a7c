"""The text of a web page, Markdown text, e-book or plain text file as a reader shows it, for
the word check (`L2.words`, `fidelity.compare`), read here without the server's extractors:

- a web page (.html, .htm, .xhtml, .xht) or web archive (.mhtml, .mht): what a browser shows
  of it, `fidelity.browser_text`;
- Markdown (.md, .markdown): the same of markdown-it's HTML of the text (CommonMark, GFM
  tables and strikethrough, raw HTML kept), its front matter (YAML between `---` lines, TOML
  between `+++` lines at its very start) taken off first, as the Markdown format does;
- an EPUB: the same of each chapter of its spine (`META-INF/container.xml` names the package
  document, whose spine lists the chapters in reading order), one after another;
- plain text (.txt, .text, .log): the file decoded (its byte-order mark, else UTF-8, else
  what charset-normalizer finds).

The server cuts these documents into pages at their headings (a text file at form feeds and
every 2,000 lines), so the text is the whole document's, compared with all its served pages.
"""

from __future__ import annotations

import codecs
import posixpath
import re
import zipfile
from pathlib import Path
from urllib.parse import unquote

from dpe_server.check.fidelity import browser_text

WEB = ("html", "htm", "xhtml", "xht", "mhtml", "mht")
MARKDOWN = ("md", "markdown")
TEXT = ("txt", "text", "log")
TYPES = (*WEB, *MARKDOWN, "epub", *TEXT)
"""The file types `document_text` reads."""

_FRONT = re.compile(r"\A\ufeff?(---|\+\+\+)\r?\n(?:.*?\r?\n)?(?:\1|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S)


def document_text(path: Path) -> str:
    """The whole text a reader shows of the file at `path` (its type from its suffix)."""
    kind = path.suffix.lower().lstrip(".")
    data = path.read_bytes()
    if kind in MARKDOWN:
        return browser_text(markdown_html(decoded(data)).encode("utf-8"))
    if kind == "epub":
        return "\n\n".join(epub_chapters(path))
    if kind in TEXT:
        return decoded(data)
    return browser_text(data)


def decoded(data: bytes) -> str:
    """`data` as text: its byte-order mark's encoding, else UTF-8, else charset-normalizer's
    best guess."""
    if data.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        return data.decode("utf-32", "replace")
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", "replace")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    import charset_normalizer

    best = charset_normalizer.from_bytes(data).best()
    return str(best) if best is not None else data.decode("cp1252", "replace")


def without_front_matter(text: str) -> str:
    """`text` less the front matter at its start (none: `text` as it is)."""
    found = _FRONT.match(text)
    return text[found.end() :] if found else text.removeprefix("\ufeff")


def markdown_html(text: str) -> str:
    """markdown-it's HTML of a Markdown text, its front matter taken off."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    return f"<html><body>{md.render(without_front_matter(text))}</body></html>"


def epub_chapters(path: Path) -> list[str]:
    """What a browser shows of each chapter of the EPUB at `path`, in its spine's order."""
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    with zipfile.ZipFile(path) as book:
        container = etree.fromstring(book.read("META-INF/container.xml"), parser)
        opf = next(
            str(e.get("full-path"))
            for e in container.iter()
            if isinstance(e.tag, str) and etree.QName(e).localname == "rootfile"
        )
        package = etree.fromstring(book.read(opf), parser)
        items = {
            str(e.get("id")): posixpath.normpath(
                posixpath.join(posixpath.dirname(opf), unquote(str(e.get("href"))))
            )
            for e in package.iter()
            if isinstance(e.tag, str) and etree.QName(e).localname == "item"
        }
        spine = [
            items.get(str(e.get("idref")), "")
            for e in package.iter()
            if isinstance(e.tag, str) and etree.QName(e).localname == "itemref"
        ]
        names = set(book.namelist())
        return [browser_text(book.read(p)) for p in spine if p in names]
