"""Running headers and footers: lines repeated at the same place across neighbouring pages.

A page's *edge lines* (lines set no larger than 1.25 × the page's body size, so that
numbered chapter titles at a fixed place are not taken for headers) are its three topmost
lines inside the top 15 % of the page and its three bottom-most lines inside the bottom
15 %, the 15 % measured from the page's first and last lines of text where they stand inside
its box (a book set in a smaller block than its paper, as the US Code of Federal Regulations
on letter pages, has its running header far below the paper's top). Their text is normalised
(case folded, white space collapsed, every number → `#`, a number with dots, dashes, slashes
or colons in it as one: so "Page 3 of 9" matches "Page 4 of 9" and "Manual 2.3.59.1.5"
matches "Manual 2.3.59.6"). An edge line of page N is a header (top) or footer (bottom) when
the same normalised text sits within 4 pt of the same height on enough neighbours: pages N±1
and N±2 (two when three or more neighbours exist, else one). When that would take every line
of the page (a page holding nothing but one repeated line), nothing is taken.

Cost: the neighbours come from the same per-page pass as the page itself (`collect`),
kept per reader: whole-document extraction runs each page's pass once and reuses it for its
neighbours, and a page's edge lines, built once when a neighbour first needs them, serve the
page itself (while the pass they came from is still the page's); a single-page read runs the
pass over at most four neighbours besides the page (only their edge lines are kept; no layout
analysis is done for them).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from dpe_server.extractors.pdf.collect import Run
from dpe_server.extractors.pdf.lines import Line, make_lines

BAND = 0.15
PER_EDGE = 3
NEIGHBOURS = (-1, 1, -2, 2)
_Y_TOL = 4.0
_DIGITS = re.compile(r"\d+(?:[.:/-]\d+)*")
_LARGE = 1.25


@dataclass(frozen=True, slots=True)
class EdgeLine:
    top: bool
    y: float
    key: str
    line: Line


def _key(text: str) -> str:
    return _DIGITS.sub("#", " ".join(text.split()).casefold())


def edge_lines(runs: Sequence[Run], box: tuple[float, float, float, float]) -> list[EdgeLine]:
    """The candidate header and footer lines of a page (`box` = x0, y0, x1, y1)."""
    if not runs:
        return []
    _, y0, _, y1 = box
    height = y1 - y0
    if height <= 0:
        return []
    # the text block's extent and the body size from the runs; lines are made of the runs
    # near its edges only (most of a page's runs are neither)
    upper = min(y1, max(r.y + r.size for r in runs))
    lower = max(y0, min(r.y for r in runs))
    weight: dict[float, int] = {}
    for r in runs:
        key = round(r.size * 2) / 2
        weight[key] = weight.get(key, 0) + len(r.text)
    body = max(weight, key=lambda k: (weight[k], -k))
    reach = BAND * height + max(r.size for r in runs)
    near = [r for r in runs if r.y >= upper - reach or r.y <= lower + reach]
    lines = [ln for ln in make_lines(near) if ln.size <= _LARGE * body]
    top = [ln for ln in lines if ln.y >= upper - BAND * height][:PER_EDGE]
    bottom = [ln for ln in lines if ln.y <= lower + BAND * height][-PER_EDGE:]
    out = [EdgeLine(True, ln.y, _key(ln.text), ln) for ln in top]
    out += [EdgeLine(False, ln.y, _key(ln.text), ln) for ln in bottom if ln not in top]
    return [e for e in out if e.key]


def repeated(page: Sequence[EdgeLine], neighbours: Sequence[Sequence[EdgeLine]]) -> list[EdgeLine]:
    """The edge lines of `page` that enough neighbours repeat."""
    if not neighbours:
        return []
    need = 2 if len(neighbours) >= 3 else 1
    out = []
    for edge in page:
        hits = sum(
            1
            for other in neighbours
            if any(
                o.key == edge.key and o.top == edge.top and abs(o.y - edge.y) <= _Y_TOL
                for o in other
            )
        )
        if hits >= need:
            out.append(edge)
    return out
