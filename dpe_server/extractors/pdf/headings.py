"""Headings: which lines are headings, and their levels from the document's heading styles.

A line is a heading when it names an outline entry of its page (a leading section number is
ignored when matching), or when it is styled as one: set at least 12 % larger than the page's
body size (the size carrying most characters), or bold at body size, short (≤ 80 characters),
with no trailing punctuation, no list marker, and not a form's row (`Label: value`, a line
ending in an amount such as `Total 690.00`).

Levels: the document's heading styles (`Styles`) are the (size, bold) pairs of the lines styled
as headings on its first `PROFILE_PAGES` pages, where documents set their title and first
headings (a bounded sample: reading one page reads at most those besides its neighbours, and
only when the page has a line styled as a heading).
They are ranked largest first, bold before regular at one size, and a heading's level is
1 + the number of those styles above its own (at most 6): a title and its section headings get
different levels, and one style has one level on every page. An outline entry's depth is a
floor (a title outside the outline sits above the outline's top level): level = max(depth,
style rank) for a line styled as a heading, else the depth. When the sampled pages have no
heading at all, the level is the size ratio to the body (≥ 1.9 → 1, ≥ 1.5 → 2, ≥ 1.25 → 3,
larger → 4, bold at body size → 5).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from dpe_server.extractors.pdf.lines import Line
from dpe_server.extractors.pdf.markers import list_marker

PROFILE_PAGES = 2
MAX_LEVEL = 6
_LARGER = 1.12

Style = tuple[float, bool]


def norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def body_size(lines: Sequence[Line]) -> float:
    weight: dict[float, int] = {}
    for line in lines:
        weight[line.size] = weight.get(line.size, 0) + len(line.text)
    if not weight:
        return 10.0
    return max(weight, key=lambda k: (weight[k], -k))


def style(line: Line) -> Style:
    return round(line.size * 2) / 2, line.bold


@dataclass(frozen=True, slots=True)
class Styles:
    """The document's heading styles, largest first."""

    ranked: tuple[Style, ...] = ()

    def level(self, line: Line) -> int:
        own = style(line)
        return min(MAX_LEVEL, 1 + sum(1 for s in self.ranked if s > own))


def document_styles(pages: Iterable[Sequence[Line]]) -> Styles:
    """The heading styles of the sampled pages (each given as its lines)."""
    found: set[Style] = set()
    for lines in pages:
        body = body_size(lines)
        found.update(style(ln) for ln in lines if styled(ln, body))
    return Styles(tuple(sorted(found, reverse=True)))


def styled(line: Line, body: float) -> bool:
    """Set as a heading: larger than the body, or short and bold at body size."""
    text = line.text
    if len(text) > 200 or not any(ch.isalpha() for ch in text):
        return False
    if line.size >= body * _LARGER:
        return True
    return (
        line.bold
        and len(text) <= 80
        and text[-1] not in ".,;:"
        and line.size >= body - 0.5
        and list_marker(line) is None
        and not _FORM_ROW.search(text)
    )


_FORM_ROW = re.compile(r"^[^:]{1,40}:\s+\S|\d[.,]\d{2}%?$")
"""A form's row, not a heading: `Label: value`, or a line ending in an amount (`Total 690.00`)."""


def _ratio_level(size: float, body: float) -> int:
    ratio = size / body if body > 0 else 1.0
    for threshold, level in ((1.9, 1), (1.5, 2), (1.25, 3), (_LARGER, 4)):
        if ratio >= threshold:
            return level
    return 5


_SECTION_NUMBER = re.compile(r"^(?:[0-9]+(?:\.[0-9]+)*\.?|[A-Z]\.|[IVX]+\.)\s+")


def outline_level(text: str, outline: dict[str, int]) -> int | None:
    """The outline depth of an entry naming this line ("2.1 Scope" matches "Scope")."""
    if not outline:
        return None
    key = norm(text)
    level = outline.get(key)
    if level is None:
        level = outline.get(_SECTION_NUMBER.sub("", key))
    return level


def heading_level(
    line: Line, body: float, outline: dict[str, int], styles: Callable[[], Styles]
) -> int | None:
    """The line's heading level, or None when it is no heading. `styles` gives the document's
    heading styles; it is called only for a line styled as a heading (the sampled pages are
    read only when a page has one)."""
    depth = outline_level(line.text, outline)
    is_styled = styled(line, body)
    if not is_styled:
        return depth
    ranked = styles()
    if depth is not None:
        return max(depth, ranked.level(line)) if ranked.ranked else depth
    return ranked.level(line) if ranked.ranked else _ratio_level(line.size, body)
