"""Document metadata when the file's properties do not give it (SPEC §4).

title = file properties → first heading → file stem; keywords and summary = file properties
(keywords, subject, description) → derived from the content, deterministically. A property
that says nothing (`placeholder`: empty, "untitled", "(anonymous)", "(unspecified)", a file
name such as "Microsoft Word - x.docx" or the document's own name) counts as absent.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from dpe_server.model.tree import JSON, Category, Document, Page, Properties, one_line

SUMMARY_LIMIT = 200
MAX_DERIVED_KEYWORDS = 5

# Page titles a format invents when a page has none: they say nothing about the content.
_GENERIC_TITLE = re.compile(r"^(page|slide|section|sheet)\s*\d+( \(cont\. \d+\))?$", re.I)


# What tools write when the author wrote nothing: their defaults, and file names.
_PLACEHOLDER = re.compile(
    r"^(?:untitled(?:[ -]?\d+)?|untitled document|unknown|unspecified|anonymous|none|null|"
    r"n/?a|title|no title|document\d*|new document|slide \d+|presentation\d*|book\d*)$",
    re.I,
)
_FILE_NAME = re.compile(
    r"^(?:microsoft (?:word|excel|powerpoint) - .*|.*\.(?:docx?|xlsx?|pptx?|pdf|odt|ods|odp|rtf|"
    r"txt|tex|dvi|ps|html?|md|indd|qxd|pages|key))$",
    re.I,
)


def placeholder(value: str | None, stem: str = "") -> bool:
    """A title or summary that says nothing: empty, a tool's default ("untitled",
    "(anonymous)", "(unspecified)"), a file name, or `stem` (the document's own name)."""
    text = " ".join((value or "").split()).strip("()[]<>{}\"' .-_")
    if not text or not any(ch.isalnum() for ch in text):
        return True
    if _PLACEHOLDER.match(text) or _FILE_NAME.match(text):
        return True
    return bool(stem) and text.casefold() == stem.casefold()


_KEYWORD_SEPARATORS = re.compile(r"[,;\n；，、]+")


def split_keywords(value: str | None) -> tuple[str, ...]:
    """Keywords as a file's properties give them, whatever the format: separated by commas,
    semicolons, line breaks or CJK commas; white space collapsed; each once, in order."""
    if not value:
        return ()
    seen: dict[str, None] = {}
    for part in _KEYWORD_SEPARATORS.split(value):
        word = " ".join(part.split())
        if word:
            seen.setdefault(word, None)
    return tuple(seen)


AUTHORSHIP = ("creator", "lastModifiedBy", "created", "modified")
"""The core properties docx and OpenDocument texts report as metadata, when present."""


def authorship(core: Mapping[str, str]) -> dict[str, JSON]:
    """The `AUTHORSHIP` fields a file's core properties hold."""
    return {k: core[k] for k in AUTHORSHIP if k in core}


def from_core(
    core: Mapping[str, str],
    page_count: int,
    page_titles: tuple[str, ...] | None,
    extra: Mapping[str, JSON],
) -> Properties:
    """`Properties` from a file's core properties (OOXML `docProps/core.xml`, OpenDocument
    `meta.xml`): its title, its keywords, its description (else subject) as the summary."""
    return Properties(
        page_count=page_count,
        title=core.get("title") or None,
        keywords=split_keywords(core.get("keywords")),
        summary=core.get("description") or core.get("subject") or None,
        page_titles=page_titles,
        extra=extra,
    )


def first_heading(pages: Sequence[Page]) -> str | None:
    for page in pages:
        for el in page.elements:
            if el.category is Category.HEADING:
                text = one_line(str(el.content.get("text", "")))
                if text:
                    return text
    return None


def derive_title(doc: Document | None, stem: str) -> str:
    """The file's own title, else its first heading, else the file name without suffix."""
    if doc is not None:
        if not placeholder(doc.properties.title, stem):
            return one_line(doc.properties.title or "")
        heading = first_heading(doc.pages)
        if heading:
            return heading
    return stem


def derive_keywords(doc: Document) -> tuple[str, ...]:
    """The file's keywords, else the first distinct meaningful page titles and headings."""
    if doc.properties.keywords:
        return doc.properties.keywords
    seen: dict[str, None] = {}
    candidates = [p.title for p in doc.pages] + [
        str(el.content.get("text", ""))
        for p in doc.pages
        for el in p.elements
        if el.category is Category.HEADING
    ]
    for cand in candidates:
        text = one_line(cand, 60)
        if text and not _GENERIC_TITLE.match(text) and text.lower() not in seen:
            seen[text.lower()] = None
            if len(seen) == MAX_DERIVED_KEYWORDS:
                break
    originals = {one_line(c, 60).lower(): one_line(c, 60) for c in reversed(candidates)}
    return tuple(originals[k] for k in seen)


def derive_summary(doc: Document, file_type: str, unit: str = "page") -> str:
    """The file's subject/description, else its first paragraph, else what it holds."""
    if not placeholder(doc.properties.summary):
        return one_line(doc.properties.summary or "", SUMMARY_LIMIT)
    for page in doc.pages:
        for el in page.elements:
            if el.category is Category.TEXT:
                text = str(el.content.get("text", ""))
                if len(text.split()) >= 3 or len(text) >= 12:
                    return one_line(text, SUMMARY_LIMIT)
    count = len(doc.pages)
    titles = ", ".join(p.title for p in doc.pages[:5] if p.title)
    plural = unit if count == 1 else unit + "s"
    return one_line(
        f"{file_type.upper()} with {count} {plural}: {titles}".rstrip(": "), SUMMARY_LIMIT
    )
