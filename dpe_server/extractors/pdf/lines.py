"""Runs → reading-order groups (column detection) → lines.

Column detection: among the runs narrower than 55 % of the text width, look for the widest
vertical band in the middle half of the page that at most 8 % of them, and fewer than a
quarter of their baselines, cross (a gutter, ≥ 8 pt; the few crossing runs are author lines,
centred page numbers, captions; the bound on baselines matters where a line is set in many
runs, as CJK placed character by character). It is a column gutter only when both sides are
at least 100 pt and 30 % of the text width wide and hold at least three lines with a stretch
of text (runs less than half an em apart) at least 60 % of the side's width, which keeps
column-aligned tables from being read as columns. When the page has none, the upper and then
the lower half of its lines are searched alone (columns above a wide table, a wide listing
above columns: the other half crosses the gutter on too many lines).

Lines that cross the gutter (a run over it, or a run starting left of it and the next one
ending right of it less than 1.5 em apart and closer than the gutter is wide: titles, author
lists, captions, wide listings) split the page into bands read top to bottom; inside a band
the left column is read before the right one (the right one first when the band's text is
predominantly right-to-left, `model.direction`); a band with text on one side only is no
columns and is read in the flow with the lines across around it. A ruled table across the
gutter, taken out of the flow before (`tables`), ends a band as a line across does: the
columns above it are read before it, those under it after. Blank space across the
whole page (more than two ems between a line and the next) also ends a band, unless the
band above it already holds column text on both sides (three full lines each): a line above
the columns with words at both ends (a page number and a date) is read before them, while
blank space that happens to run across both columns (figures side by side) does not cut
them. Each side is searched again, so three columns work too. A page without columns may have
side heads (`sideheads`): each head is read before the body lines beside and under it.

Lines: runs whose baselines are within 0.4 em of each other; a superscript (a run of a few
characters set smaller than the line under it and raised 0.4 to 0.6 em over its baseline: a
footnote marker `4)`, `10)`, an exponent) belongs to that line, where it stands.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from dpe_server.extractors.pdf.collect import Run
from dpe_server.extractors.pdf.sideheads import side_gutter
from dpe_server.extractors.pdf.visual import SCRIPT_GAP, logical, number_units, scripts_differ
from dpe_server.model.direction import is_rtl

_MIN_GUTTER = 8.0
_BAND_GAP = 2.0
"""Blank space, in ems, across the whole page that ends a band of lines above the columns."""
_CJK_START = 0x2E80
_OVERDRAWN_PT = 1.0
"""Runs of a line overlapping by more than this many points may be drawn over each other."""
_COVERED = 0.8
"""A run covered for this share of its width by the line's other runs is drawn over them."""

Cut = tuple[float, float, float]
"""A block taken out of the flow (a ruled table): its left and right x and its top y."""


@dataclass(slots=True)
class Line:
    """Runs sharing a baseline, left to right."""

    runs: list[Run]
    y: float
    size: float
    x0: float
    x1: float
    text: str
    bold: bool
    mono: bool
    rtl: bool = False
    """Its text is predominantly right-to-left (`model.direction`): it starts at its right."""
    space_after: bool = False
    """It ends with a space character in the page's text (`Run.space_after`): the line
    that continues it begins a new word."""

    @property
    def start(self) -> float:
        """Where the line starts, mirrored for a right-to-left line (-x1), so that a larger
        value is always further in from the line's own margin."""
        return -self.x1 if self.rtl else self.x0

    def cells(self) -> list[tuple[float, float, str]]:
        """The line cut at wide gaps: (x0, x1, text) per cell."""
        out: list[tuple[float, float, str]] = []
        for run in self.runs:
            gap = max(1.2 * self.size, 10.0)
            if out and run.x0 - out[-1][1] < gap:
                x0, _, text = out[-1]
                out[-1] = (x0, run.x1, _join(text, run.text))
            else:
                out.append((run.x0, run.x1, run.text))
        return out


def _join(left: str, right: str) -> str:
    if not left or not right:
        return left + right
    if left[-1].isspace() or right[0].isspace():
        return left + right
    if ord(left[-1]) >= _CJK_START and ord(right[0]) >= _CJK_START:
        return left + right
    return f"{left} {right}"


def make_lines(runs: list[Run]) -> list[Line]:
    """Group runs into lines by baseline (top to bottom), each line left to right."""
    if len(runs) == 1:  # (a table cell's text, mostly)
        return [_single([runs[0]])]
    lines: list[list[Run]] = []
    for run in sorted(runs, key=lambda r: (-r.y, r.x0)):
        if lines:
            current = lines[-1]
            ref = current[0]
            if abs(ref.y - run.y) <= 0.4 * max(ref.size, run.size):
                current.append(run)
                continue
        lines.append([run])
    lines = _raised_joined(lines)
    return [_single(group) if len(group) == 1 else _line(group) for group in lines]


_RAISED_SIZE = 0.85
_RAISED_RISE = 0.6
_RAISED_CHARS = 4


def _raised_joined(lines: list[list[Run]]) -> list[list[Run]]:
    """Lines with a superscript's runs put back in the line they belong to: a run of a few
    characters (`4)`, `10)`, `1`, `*`) set smaller than the line just below it and raised
    above that line's baseline by more than the 0.4 em a baseline may wander but less than
    0.6 em (no line of text stands that close above another), inside that line's extent. A
    footnote marker set so is a line of its own otherwise, and cuts its paragraph in two."""
    out: list[list[Run]] = []
    for i, group in enumerate(lines):
        below = lines[i + 1] if i + 1 < len(lines) else None
        if below is not None and _raised_over(group, below):
            below.extend(group)
            continue
        out.append(group)
    return out


def _raised_over(group: list[Run], below: list[Run]) -> bool:
    size = max(r.size for r in below)
    base = next(r.y for r in below if r.size == size)
    x0 = min(r.x0 for r in below)
    x1 = max(r.x1 for r in below)
    return all(
        len(r.text.strip()) <= _RAISED_CHARS
        and r.size <= _RAISED_SIZE * size
        and 0 < r.y - base <= _RAISED_RISE * size
        and x0 - 2 * size <= r.x0
        and r.x1 <= x1 + 2 * size
        for r in group
    )


def _line(runs: list[Run]) -> Line:
    """One line's runs in reading order (right to left when most letters are right-to-left
    ones), joined by a space across a gap and without one where a word was cut in pieces; a
    gap of an em or more is always a space (two columns of CJK prose are not one word)."""
    if len(runs) == 1:
        return _single(runs)
    runs.sort(key=lambda r: r.x0)
    if any(b.x0 < a.x1 - _OVERDRAWN_PT for a, b in itertools.pairwise(runs)):
        runs = drop_overdrawn(runs)
        if len(runs) == 1:
            return _single(runs)
    rtl = is_rtl(" ".join(r.text for r in runs))
    text = ""
    prev: Run | None = None
    if all(r.visual for r in runs):
        text = _drawn(runs, rtl)
    for run in [] if text else reversed(runs) if rtl else runs:
        if prev is None:
            text = run.text
        else:
            gap = prev.x0 - run.x1 if rtl else run.x0 - prev.x1
            if gap >= run.size and text and run.text:
                text = f"{text} {run.text}"
            elif gap > 0.15 * run.size:
                text = _join(text, run.text)
            else:
                text += run.text
        prev = run
    weight: dict[float, int] = {}
    for run in runs:
        key = round(run.size * 2) / 2
        weight[key] = weight.get(key, 0) + len(run.text)
    if len(weight) == 1:
        (size,) = weight
    else:
        size = max(weight, key=lambda k: (weight[k], k))
    visible = [r for r in runs if r.text.strip()]
    mono = all(r.mono for r in visible)
    return Line(
        runs,
        next((r.y for r in runs if round(r.size * 2) / 2 == size), runs[0].y),
        size,
        min([r.x0 for r in runs]),
        max([r.x1 for r in runs]),
        text.rstrip() if mono else " ".join(text.split()),
        bool(visible) and all(r.bold for r in visible),
        bool(visible) and mono,
        rtl,
        (runs[0] if rtl else runs[-1]).space_after,  # (the last in reading order)
    )


def drop_overdrawn(runs: list[Run]) -> list[Run]:
    """The runs of one line without those drawn over the others: a run whose extent other
    runs of the line cover for at least `_COVERED` of its width is a second drawing of their
    text when its letters are theirs, in their order (a label printed twice at one place,
    once with only some of its letters: `S ifi th t th` over `Specifies that the`); of two
    such drawings the one with fewer letters for its width goes (a word drawn twice over
    itself keeps one of the two). Text side by side never overlaps so; a run of other
    letters (a number under a hidden label, a Thai vowel sign over its consonant) stays."""

    def letters(run: Run) -> float:
        width = run.x1 - run.x0
        return sum(ch.isalnum() for ch in run.text) / width if width > 0 else 0.0

    kept = list(runs)
    for run in sorted(runs, key=letters):
        width = run.x1 - run.x0
        own = [ch for ch in run.text if ch.isalnum()]
        if width <= 0 or not own:
            continue
        over = [o for o in kept if o is not run and min(run.x1, o.x1) > max(run.x0, o.x0)]
        covered = sum(min(run.x1, o.x1) - max(run.x0, o.x0) for o in over)
        if covered >= _COVERED * width and _within(own, "".join(o.text for o in over)):
            kept.remove(run)
    return kept


def _within(letters: list[str], text: str) -> bool:
    """Whether `letters` appear in `text` in their order (a drawing of some of its letters)."""
    rest = iter(text)
    return all(ch in rest for ch in letters)


def _drawn(runs: list[Run], rtl: bool) -> str:
    """The text of a line of runs as drawn (`Run.visual`, a page holding right-to-left
    text), left to right: their visual texts joined as `_line` joins runs (a space across a
    gap; across a narrower one where it parts two scripts), read in logical order."""
    shown: list[str] = []
    prev: Run | None = None
    for run in runs:
        if prev is not None and shown:
            gap = run.x0 - prev.x1
            left, right = shown[-1][-1], run.visual[0]
            if gap >= run.size or (
                (
                    gap > 0.15 * run.size
                    or (gap > SCRIPT_GAP * run.size and scripts_differ(left, right))
                )
                and not left.isspace()
                and not (ord(left) >= _CJK_START and ord(right) >= _CJK_START)
            ):
                shown.append(" ")
        shown.extend(number_units(run.visual))
        prev = run
    return logical(shown, rtl)


def _single(runs: list[Run]) -> Line:
    """`_line` of a line that is one run (most lines of prose), without its bookkeeping."""
    (run,) = runs
    text = run.text
    shown = bool(text.strip())
    return Line(
        runs,
        run.y,
        round(run.size * 2) / 2,
        run.x0,
        run.x1,
        single_text(run),
        shown and run.bold,
        shown and run.mono,
        False if text.isascii() else is_rtl(text),
        run.space_after,
    )


def single_text(run: Run) -> str:
    """The text of the line that is `run` alone (`Line.text`): its white space collapsed,
    only trailing white space dropped where it is monospace."""
    text = run.text
    if run.mono and text.strip():
        return text.rstrip()
    return " ".join(text.split())


def _widest_gap(runs: list[Run], lo: float, hi: float, allowed: int) -> tuple[float, float] | None:
    """The widest x band in the middle half of [lo, hi] crossed by at most `allowed` runs."""
    events = sorted([(r.x0, 1) for r in runs] + [(r.x1, -1) for r in runs])
    width = hi - lo
    best: tuple[float, float] | None = None
    depth = 0
    start: float | None = None
    for x, step in events:
        if depth <= allowed and start is None:
            start = x
        depth += step
        if depth > allowed and start is not None:
            mid = (start + x) / 2
            if (
                x - start >= _MIN_GUTTER
                and lo + 0.25 * width <= mid <= hi - 0.25 * width
                and (best is None or x - start > best[1] - best[0])
            ):
                best = (start, x)
            start = None
    return best


def _gutter(runs: list[Run]) -> tuple[float, float] | None:
    if len(runs) < 6:
        return None
    lo = min(r.x0 for r in runs)
    hi = max(r.x1 for r in runs)
    width = hi - lo
    if width < 200:
        return None
    narrow = [r for r in runs if r.x1 - r.x0 < 0.55 * width]
    baselines = len({round(r.y) for r in narrow})
    allowed = max(2, min(int(0.08 * len(narrow)), baselines // 4))
    best = _widest_gap(narrow, lo, hi, allowed)
    if best is None:
        return None
    mid = (best[0] + best[1]) / 2
    left = [r for r in narrow if r.x1 <= mid]
    right = [r for r in narrow if r.x0 >= mid]
    left_w = best[0] - lo
    right_w = hi - best[1]
    if min(left_w, right_w) < max(100.0, 0.3 * width):
        return None
    if _full_lines(left, left_w) < 3 or _full_lines(right, right_w) < 3:
        return None
    return best


def _half_gutter(runs: list[Run]) -> tuple[float, float] | None:
    """A gutter found in the upper or the lower half of the page's lines alone, for a page
    whose other half is crossed by more than a few lines (a wide table under the columns)."""
    ys = sorted({round(r.y) for r in runs})
    if len(ys) < 12:
        return None
    mid = ys[len(ys) // 2]
    for half in ([r for r in runs if r.y >= mid], [r for r in runs if r.y < mid]):
        gutter = _gutter(half)
        if gutter is not None:
            return gutter
    return None


def _full_lines(runs: list[Run], width: float) -> int:
    """How many of one side's lines hold a stretch of text at least 60 % of `width` wide:
    runs on one baseline less than half an em apart taken together (a line set in many runs,
    as CJK placed character by character, is one stretch; table cells apart are not)."""
    by_line: dict[int, list[Run]] = {}
    for r in runs:
        by_line.setdefault(round(r.y), []).append(r)
    full = 0
    for line in by_line.values():
        line.sort(key=lambda r: r.x0)
        start, end, widest = line[0].x0, line[0].x1, 0.0
        for r in line[1:]:
            if r.x0 - end >= 0.5 * r.size:
                widest = max(widest, end - start)
                start = r.x0
            end = max(end, r.x1)
        if max(widest, end - start) >= 0.6 * width:
            full += 1
    return full


def _crosses(line: Line, g0: float, g1: float) -> bool:
    """A line that runs across the gutter: one run over it, or text flowing over it (a run
    starting left of it and the next one ending right of it less than 1.5 em apart, and
    closer than the gutter is wide: the two columns' lines stand the whole gutter apart,
    however narrow it is)."""
    prev: Run | None = None
    for run in line.runs:
        if run.x0 < g0 - 0.5 and run.x1 > g1 + 0.5:
            return True
        if prev is not None and prev.x0 < g0 and run.x1 > g1:
            return run.x0 - prev.x1 < min(1.5 * line.size, 0.9 * (g1 - g0))
        prev = run
    return False


def _columns(left: list[Run], left_w: float, right: list[Run], right_w: float) -> bool:
    """Whether both sides hold column text (three full lines each, as `_gutter` asks)."""
    return _full_lines(left, left_w) >= 3 and _full_lines(right, right_w) >= 3


def reading_groups(runs: list[Run], depth: int = 0, cuts: Sequence[Cut] = ()) -> list[list[Run]]:
    """Split runs into groups in reading order (bands top to bottom, columns left to right);
    `cuts` are blocks out of the flow that end a band where they run across the gutter."""
    gutter = _gutter(runs) if depth < 2 else None
    if gutter is None and depth == 0:
        gutter = _half_gutter(runs)
    if gutter is None:
        side = side_gutter(runs) if depth == 0 else None
        if side is not None:
            return _side_headed(runs, side[0])
        return [runs] if runs else []
    g0, g1 = gutter
    lo = min(r.x0 for r in runs)
    hi = max(r.x1 for r in runs)
    groups: list[list[Run]] = []
    band_left: list[Run] = []
    band_right: list[Run] = []
    spanning: list[Run] = []
    prev: Line | None = None
    across = [top for x0, x1, top in cuts if x0 < g0 and x1 > g1]

    def one_sided() -> bool:
        """The band has text on one side only: it is no columns, it goes on the flow."""
        if band_left and band_right:
            return False
        spanning.extend(band_left + band_right)
        band_left.clear()
        band_right.clear()
        return True

    def flush_band() -> None:
        one_sided()
        if spanning:
            groups.append(list(spanning))
            spanning.clear()
        sides = (band_left, band_right)
        if band_left and is_rtl(" ".join(r.text for r in band_left + band_right)):
            sides = (band_right, band_left)
        for side in sides:
            if side:
                groups.extend(reading_groups(list(side), depth + 1, cuts))
            side.clear()

    for line in make_lines(runs):
        apart = prev is not None and prev.y - line.y - line.size > _BAND_GAP * max(
            prev.size, line.size
        )
        if prev is not None and any(line.y < top < prev.y for top in across):
            flush_band()
        prev = line
        if _crosses(line, g0, g1):
            if not one_sided():
                flush_band()
            spanning.extend(line.runs)
            continue
        if apart and not _columns(band_left, g0 - lo, band_right, hi - g1):
            flush_band()
        for run in line.runs:
            (band_left if run.x1 <= g0 + 0.5 or run.x0 < g0 else band_right).append(run)
    flush_band()
    return groups


def _side_headed(runs: list[Run], g0: float) -> list[list[Run]]:
    """A page with side heads (`sideheads`) in reading order: each head (the lines left of
    the gutter that follow each other closely) before the body lines beside and under it,
    down to the next head, so a head's first line is not read into the body line on its
    baseline."""
    heads: list[list[Line]] = []
    for line in make_lines([r for r in runs if r.x1 <= g0]):
        if heads and heads[-1][-1].y - line.y <= 2 * max(line.size, heads[-1][-1].size):
            heads[-1].append(line)
        else:
            heads.append([line])
    items: list[tuple[float, int, list[Run]]] = [
        (
            max(ln.y + ln.size for ln in head) + 0.5 * head[0].size,
            0,
            [r for ln in head for r in ln.runs],
        )
        for head in heads
    ]
    items += [(ln.y + ln.size, 1, ln.runs) for ln in make_lines([r for r in runs if r.x1 > g0])]
    items.sort(key=lambda item: (-item[0], item[1]))
    groups: list[list[Run]] = []
    body = False
    for _, kind, group in items:
        if kind == 1 and body:
            groups[-1].extend(group)
        else:
            groups.append(list(group))
        body = kind == 1
    return groups
