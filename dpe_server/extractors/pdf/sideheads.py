"""Side heads: headings set in a narrow column of their own, left of the body text they head.

Manuals and reports (the IRS's Internal Revenue Manual, many standards) put each section's
number and title in a narrow left column, its first line on the baseline of the section's
first body line: read line by line, the heading is folded into the body (`2.3.59.1 (1)
Overview: The Business Master…`, then `Program Scope and` in the middle of the next line).

A page has side heads when a blank vertical band at least 10 pt wide, which no line crosses
but in the top and bottom tenth of the page's text (a running header, a footer), parts a left
side at least 40 pt wide but narrower than 35 % of the text width from a right side that
holds at least three lines with a stretch of text (runs less than half an em apart)
filling 60 % of its width (prose, not a table's cells), and the left side holds short
lines (at most 40 characters, two of them with letters) that are at most half as many as the
right side's lines (one label per row beside each line is a two-column table, not side
heads). Column detection (`lines`) asks first: its columns are both wider than this.
"""

from __future__ import annotations

from collections.abc import Sequence

from dpe_server.extractors.pdf.collect import Run

_MIN_GAP = 8.0
_MIN_LEFT = 40.0
_MAX_LEFT = 0.35
_EDGE = 0.1
_HEAD_CHARS = 40
_SPARSE = 0.75


def side_gutter(runs: Sequence[Run]) -> tuple[float, float] | None:
    """The blank band (x0, x1) between a page's side heads and its body, or None."""
    if len(runs) < 6:
        return None
    top = max(r.y for r in runs)
    bottom = min(r.y for r in runs)
    edge = _EDGE * (top - bottom)
    middle = [r for r in runs if bottom + edge <= r.y <= top - edge]
    if len(middle) < 6:
        return None
    lo = min(r.x0 for r in middle)
    hi = max(r.x1 for r in middle)
    width = hi - lo
    if width < 200:
        return None
    band = _band(middle, lo + _MIN_LEFT, lo + _MAX_LEFT * width)
    if band is None:
        return None
    g0, g1 = band
    left = [r for r in middle if r.x1 <= g0]
    right = [r for r in middle if r.x0 >= g1]
    left_lines = _baselines(left)
    right_lines = _baselines(right)
    if len(left_lines) < 2 or len(left_lines) > _SPARSE * len(right_lines):
        return None
    if any(len(r.text.strip()) > _HEAD_CHARS for r in left):
        return None
    if sum(1 for r in left if sum(ch.isalpha() for ch in r.text) >= 3) < 2:
        return None
    full = 0.6 * (hi - g1)
    if sum(1 for y in right_lines if _stretch(right, y) >= full) < 3:
        return None
    return band


def _band(runs: Sequence[Run], start: float, stop: float) -> tuple[float, float] | None:
    """The widest x band at least `_MIN_GAP` wide that no run crosses, its middle between
    `start` and `stop`."""
    events = sorted([(r.x0, 1) for r in runs] + [(r.x1, -1) for r in runs])
    best: tuple[float, float] | None = None
    depth = 0
    begin: float | None = None
    for x, step in events:
        depth += step
        if depth == 0:
            begin = x
        elif begin is not None:
            if (
                x - begin >= _MIN_GAP
                and start <= (begin + x) / 2 <= stop
                and (best is None or x - begin > best[1] - best[0])
            ):
                best = (begin, x)
            begin = None
    return best


def _baselines(runs: Sequence[Run]) -> list[int]:
    return sorted({round(r.y) for r in runs})


def _stretch(runs: Sequence[Run], y: int) -> float:
    """The widest stretch of text on the baseline `y`: runs less than half an em apart taken
    together (a table's cells, further apart, are not one)."""
    on = sorted((r for r in runs if round(r.y) == y), key=lambda r: r.x0)
    start, end, widest = on[0].x0, on[0].x1, 0.0
    for r in on[1:]:
        if r.x0 - end >= 0.5 * r.size:
            widest = max(widest, end - start)
            start = r.x0
        end = max(end, r.x1)
    return max(widest, end - start)
