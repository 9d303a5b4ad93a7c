"""The monospace fonts: a paragraph or run set in one of them reads as code (docx, pptx,
OpenDocument styles).

One list for every format (docx and pptx kept two that disagreed): the union of their Latin
programming fonts. The two CJK fonts one of them listed (MS Gothic in pptx, SimSun-ExtB in
docx) are not in it: their Latin letters are fixed-width, but Japanese and Chinese documents
set their prose in them, which is not code."""

from __future__ import annotations

MONOSPACE = frozenset(
    name.lower()
    for name in (
        "Andale Mono",
        "Cascadia Code",
        "Cascadia Mono",
        "Consolas",
        "Courier",
        "Courier New",
        "DejaVu Sans Mono",
        "Fira Code",
        "Fira Mono",
        "IBM Plex Mono",
        "Inconsolata",
        "JetBrains Mono",
        "Liberation Mono",
        "Lucida Console",
        "Lucida Sans Typewriter",
        "Menlo",
        "Monaco",
        "Noto Mono",
        "Noto Sans Mono",
        "OCR A Extended",
        "Roboto Mono",
        "SF Mono",
        "Source Code Pro",
        "Ubuntu Mono",
    )
)
"""Font names, lower case."""


def is_monospace(font: str | None) -> bool:
    """Whether `font` (a typeface name, any case, spaces around it) is a monospace font."""
    return bool(font) and font.strip().lower() in MONOSPACE  # type: ignore[union-attr]
