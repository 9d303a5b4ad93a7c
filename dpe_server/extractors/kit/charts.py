"""A chart's `data_summary`: the sentence a person would write about its data.

Deterministic English, numbers with thousands separators and trimmed decimals:

- pie and doughnut: the shares of the first series, largest first
  ("Sales by region: East 45% (1,200), West 30% (800), North 25% (650); total 2,650.");
- every other type, per series (up to 3): the trend and the extremes with their category
  ("Revenue rises from 1,250 (Q1) to 1,560 (Q4); highest 1,560 (Q4), lowest 1,250 (Q1).");
  scatter and bubble points are read in x order and labelled `x=…`;
  the trend is rising or falling (every step the same way, or flat), flat, or mixed
  ("goes from … to … with ups and downs"). More series are counted, not described.

Re-exported by `dpe_server.extractors.ooxml.drawingml`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from itertools import pairwise

from dpe_server.model.tree import JSON

MAX_SERIES = 3
MAX_SHARES = 5
MAX_LABEL = 40


def format_number(value: float) -> str:
    """1250 → "1,250"; 1234.5678 → "1,234.57"; 0.012345 → "0.0123"; -0.0 → "0"."""
    if value == 0:
        return "0"
    if isinstance(value, int) or float(value).is_integer():
        return f"{int(value):,}"
    if abs(value) >= 1:
        text = f"{value:,.2f}"
    elif abs(value) >= 1e-4:
        return f"{value:.3g}"
    else:
        return f"{value:.2e}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _numbers(series: Mapping[str, JSON]) -> list[tuple[float, str]]:
    """(value, category) of each numeric point of a series; blanks, NaN and ±inf left out."""
    values = series.get("values") or []
    categories = series.get("categories") or []
    out = []
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            continue
        cat = str(categories[i]) if i < len(categories) and categories[i] not in (None, "") else ""
        out.append((v, _label(cat) or str(i + 1)))
    return out


def _label(category: str) -> str:
    """A category as it reads inside a sentence: one line, at most `MAX_LABEL` characters."""
    flat = " ".join(category.split())
    return flat if len(flat) <= MAX_LABEL else flat[: MAX_LABEL - 1].rstrip() + "…"


def _xy_points(points: Sequence[tuple[float, str]]) -> list[tuple[float, str]]:
    """Scatter points labelled `x=…`, in x order when every x is a number."""
    try:
        order = sorted(points, key=lambda p: float(p[1].replace(",", "")))
    except ValueError:
        order = list(points)
    return [(v, f"x={x}") for v, x in order]


def _at(value: float, category: str) -> str:
    return f"{format_number(value)} ({category})"


def _trend(values: Sequence[float]) -> str:
    steps = [b - a for a, b in pairwise(values)]
    if all(s == 0 for s in steps):
        return "flat"
    if all(s >= 0 for s in steps):
        return "rising"
    if all(s <= 0 for s in steps):
        return "falling"
    return "mixed"


def _series_sentence(name: str, points: Sequence[tuple[float, str]]) -> str:
    if not points:
        return f"{name} has no values."
    if len(points) == 1:
        return f"{name}: {_at(*points[0])}."
    values = [v for v, _ in points]
    first, last = points[0], points[-1]
    trend = _trend(values)
    if trend == "flat":
        return f"{name} stays at {format_number(first[0])} across {len(points)} points."
    verb = {"rising": "rises", "falling": "falls"}.get(trend, "goes")
    text = f"{name} {verb} from {_at(*first)} to {_at(*last)}"
    if trend == "mixed":
        text += " with ups and downs"
    high = max(points, key=lambda p: p[0])
    low = min(points, key=lambda p: p[0])
    return f"{text}; highest {_at(*high)}, lowest {_at(*low)}."


def _pie_sentence(series: Mapping[str, JSON]) -> str:
    points = [(v, c) for v, c in _numbers(series) if v > 0]
    name = str(series.get("name") or "Shares")
    if not points:
        return f"{name} has no positive values."
    total = sum(v for v, _ in points)
    ranked = sorted(points, key=lambda p: -p[0])
    shares = [f"{c} {_percent(v / total)} ({format_number(v)})" for v, c in ranked[:MAX_SHARES]]
    more = len(ranked) - MAX_SHARES
    tail = f" and {more} more" if more > 0 else ""
    return f"{name}: {', '.join(shares)}{tail}; total {format_number(total)}."


def _percent(share: float) -> str:
    pct = share * 100
    text = f"{pct:.0f}" if pct >= 10 or pct.is_integer() else f"{pct:.1f}"
    return text + "%"


def data_summary(chart_type: str, series: Sequence[Mapping[str, JSON]]) -> str:
    """One or a few sentences describing the data of a chart's series."""
    if not series:
        return "No data series."
    if chart_type in ("pie", "doughnut") and len(series) >= 1:
        text = _pie_sentence(series[0])
        others = len(series) - 1
        return text + (f" {others} more series not described." if others else "")
    sentences = []
    for i, s in enumerate(series[:MAX_SERIES]):
        name = str(s.get("name") or f"Series {i + 1}")
        points = _numbers(s)
        if chart_type in ("scatter", "bubble"):
            points = _xy_points(points)
        sentences.append(_series_sentence(name, points))
    more = len(series) - MAX_SERIES
    if more > 0:
        sentences.append(f"{more} more series not described.")
    return " ".join(sentences)
