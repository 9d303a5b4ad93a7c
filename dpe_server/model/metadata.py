"""Document metadata when the file's properties do not give it (SPEC §4).

title = file properties → first heading → file stem; keywords and summary = file properties
(keywords, subject, description) → derived from the content, deterministically.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from dpe_server.model.tree import Category, Document, Page, one_line

SUMMARY_LIMIT = 200
MAX_DERIVED_KEYWORDS = 5

# Page titles a format invents when a page has none: they say nothing about the content.
_GENERIC_TITLE = re.compile(r"^(page|slide|section|sheet)\s*\d+( \(cont\. \d+\))?$", re.I)


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
        if doc.properties.title and doc.properties.title.strip():
            return one_line(doc.properties.title)
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
    if doc.properties.summary and doc.properties.summary.strip():
        return one_line(doc.properties.summary, SUMMARY_LIMIT)
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
