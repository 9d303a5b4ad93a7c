"""DrawingML shared by the xlsx, pptx and docx extractors: charts, SmartArt, pictures, text.

Everything here is pure: it takes parsed XML (from `Package.xml`) or bytes and returns plain
data for an element's `content` (SPEC §4). Nothing opens files.

Charts (`parse_chart`; `data_summary` and `format_number` in `drawingml_summary`)
    `parse_chart(chartSpace, resolve)` reads a chart part (`c:chartSpace`, and Office 2016
    `cx:chartSpace` charts: waterfall, treemap, sunburst, funnel, histogram, box-whisker, map)
    into `{chart_type, title, series: [{name, categories, values}], data_summary}` plus
    `chart_types` (combo charts: every plot type in order; `chart_type` is the first),
    `bar_direction`, `grouping`, `axis_titles` ({"x", "y", "x2", "y2"} by axis position),
    `title_auto` (True when the title is the series name, see below) where they apply.
    Data comes from the caches in the part (`c:strCache`, `c:numCache`, `c:strLit`,
    `c:numLit`, `c:multiLvlStrCache`); a reference with no cached point is handed to
    `resolve(formula)` when given, whose display strings are turned into numbers for values
    ("1,250" → 1250, "12%" → 0.12, "(3)" → -3, else None). Values are int when integral,
    else float, None for blanks, errors and non-finite numbers. Categories are display
    strings: numeric ones read through their format code (dates as ISO `2024-01-31`, the
    workbook's 1904 date system honoured, percents, fixed decimals); multi-level categories
    read "2024 / Q1"; scatter and bubble charts take their x values as categories (and
    bubble `sizes`). At most `MAX_POINTS` points per source. `mc:AlternateContent` yields
    its Fallback; c14/c15 extensions (`c:extLst`, filtered series) are ignored.
    Title: the explicit `c:title` (rich text, else its reference's cache or `resolve`);
    with no explicit title, a single-series chart whose auto title is not deleted is titled
    by its series name (`title_auto: true`), as Excel and PowerPoint show it; otherwise "".

SmartArt (`smartart_nodes`, `diagram_content`)
    The node texts of a diagram data part (`dgm:dataModel`), in document order, and the
    SPEC content built from them; `smartart_drawing_texts` reads the drawing part
    (`dsp:drawing`) instead, for diagrams whose data model has no text.

Math
    `omml_to_linear` (re-exported from `omml`) turns OMML into linear text.

Pictures (`image_mime`, `image_size`, `emu_to_px`; in `drawingml_images`)
    The mime type from magic bytes (or the part name), the pixel size from the header bytes
    of png, jpeg, gif, bmp, webp and tiff without Pillow, and EMU → px (9525 EMU per px).

Text (`text_of`, `paragraphs_of`)
    The text of a DrawingML text body (`p:txBody`, `c:rich`, `dgm:t`, `a:txBody`, or one
    `a:p`): runs and fields joined, `a:br` as a newline, paragraphs joined by `sep` ("\\n").
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from functools import lru_cache

from lxml import etree

from dpe_server.extractors.kit.charts import data_summary, format_number
from dpe_server.extractors.kit.diagrams import diagram_content
from dpe_server.extractors.kit.media import image_mime
from dpe_server.extractors.kit.package import NS
from dpe_server.extractors.ooxml.omml import omml_to_linear
from dpe_server.extractors.ooxml.pictures import EMU_PER_PX, emu_to_px, image_size
from dpe_server.model.content import AxisTitles, ChartContent, Series

__all__ = [
    "EMU_PER_PX",
    "data_summary",
    "diagram_content",
    "emu_to_px",
    "format_number",
    "image_mime",
    "image_size",
    "omml_to_linear",
    "paragraphs_of",
    "parse_chart",
    "smartart_drawing_texts",
    "smartart_nodes",
    "text_of",
]

Resolver = Callable[[str], list[str]]
"""Display strings of the cells a chart formula (`Sheet1!$B$2:$B$5`) names; [] if unknown."""

MAX_POINTS = 100_000
"""Points read per data source at most (a declared `ptCount` can be anything)."""

_A = f"{{{NS['a']}}}"
_C = f"{{{NS['c']}}}"
_DGM = f"{{{NS['dgm']}}}"
_MC = f"{{{NS['mc']}}}"
CX_NS = "http://schemas.microsoft.com/office/drawing/2014/chartex"
_CX = f"{{{CX_NS}}}"
DSP_NS = "http://schemas.microsoft.com/office/drawing/2008/diagram"
_DSP = f"{{{DSP_NS}}}"


# --- text -------------------------------------------------------------------------------


def paragraphs_of(el: etree._Element) -> list[str]:
    """The text of each `a:p` in `el` (or of `el` itself when it is an `a:p`)."""
    paras = [el] if el.tag == _A + "p" else list(el.iter(_A + "p"))
    out = []
    for p in paras:
        parts = []
        for node in p.iter(_A + "t", _A + "br"):
            parts.append("\n" if node.tag == _A + "br" else node.text or "")
        out.append("".join(parts))
    return out


def text_of(el: etree._Element | None, sep: str = "\n") -> str:
    """A DrawingML text body's text: paragraphs joined by `sep`, outer blank lines trimmed."""
    if el is None:
        return ""
    return sep.join(paragraphs_of(el)).strip()


# --- chart values ------------------------------------------------------------------------


def _number(text: str | None) -> int | float | None:
    """A cached number as int when integral, else float; None for blanks and errors."""
    if text is None:
        return None
    try:
        value = float(text.strip())
    except ValueError:
        return None
    if not math.isfinite(value):
        return None
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


_DECORATION = re.compile(r"[\s\u00a0,$€£¥₹%]")


def _display_number(text: str) -> int | float | None:
    """A number shown as text ("1,250", "12%", "(3.5)", "$4.00") as a number, else None."""
    s = text.strip()
    negative = s.startswith("(") and s.endswith(")")
    s = s.strip("()")
    percent = s.endswith("%")
    value = _number(_DECORATION.sub("", s))
    if value is None:
        return None
    if percent:
        value = value / 100
    value = -value if negative else value
    return int(value) if isinstance(value, float) and value.is_integer() else value


_DATE_CODE = re.compile(r"[dmyhs]", re.IGNORECASE)
_QUOTED = re.compile(r'"[^"]*"|\[[^\]]*\]|\\.')


@lru_cache(maxsize=64)
def _formatter(code: str, date1904: bool) -> Callable[[float], str]:
    """How a cached number shows under (a simple reading of) its number format code."""
    bare = _QUOTED.sub("", code or "")
    decimals = re.search(r"0\.(0{1,10})", bare)
    places = len(decimals.group(1)) if decimals else 0
    if bare and bare.lower() != "general" and _DATE_CODE.search(bare):
        base = datetime(1904, 1, 1) if date1904 else datetime(1899, 12, 30)
        pattern = "%Y-%m-%d %H:%M" if re.search("[hs]", bare, re.IGNORECASE) else "%Y-%m-%d"

        def date(value: float) -> str:
            if not 0 <= value < 2958466:  # Excel's last date is 9999-12-31
                return format_number(value)
            return (base + timedelta(days=float(value))).strftime(pattern)

        return date
    if "%" in bare:
        return lambda value: f"{value * 100:.{places}f}%"
    grouping = "," if "#,##" in bare else ""
    if decimals:
        return lambda value: f"{value:{grouping}.{places}f}"
    if grouping:
        return format_number
    return lambda value: format_number(value).replace(",", "")


def _points(cache: etree._Element, ns: str = _C) -> tuple[int, dict[int, str]]:
    """(declared point count, {index: text}) of a c:strCache/c:numCache/lit or a cx:lvl."""
    count_el = cache.find(ns + "ptCount")
    declared = cache.get("ptCount") if count_el is None else count_el.get("val")
    v_tag = ns + "v"
    pts: dict[int, str] = {}
    for pt in cache.iterchildren(ns + "pt"):
        try:
            idx = int(pt.get("idx", len(pts)))
        except ValueError:
            continue
        text = pt.text if len(pt) == 0 else None  # cx:pt holds its value as text
        for child in pt:
            if child.tag == v_tag:
                text = child.text
                break
        pts[idx] = text or ""
    try:
        count = int(declared) if declared is not None else 0
    except ValueError:
        count = 0
    count = min(max(count, max(pts, default=-1) + 1), MAX_POINTS)
    return count, pts


def _fill(count: int, pts: Mapping[int, str]) -> list[str | None]:
    return [pts.get(i) for i in range(count)]


def _source(data: etree._Element | None) -> etree._Element | None:
    """The reference or literal element inside a c:tx/c:cat/c:val/c:xVal/c:yVal."""
    if data is None:
        return None
    for child in _children(data):
        if child.tag in _SOURCE_TAGS:
            return child
    return None


_SOURCE_TAGS = {_C + t for t in ("strRef", "numRef", "multiLvlStrRef", "strLit", "numLit", "v")}


def _children(el: etree._Element) -> list[etree._Element]:
    """Children, with mc:AlternateContent replaced by its Fallback (else its first Choice)."""
    out: list[etree._Element] = []
    for child in el:
        if child.tag == _MC + "AlternateContent":
            branch = child.find(_MC + "Fallback")
            if branch is None:
                branch = child.find(_MC + "Choice")
            if branch is not None:
                out.extend(_children(branch))
        elif isinstance(child.tag, str):
            out.append(child)
    return out


def _resolved(src: etree._Element, resolve: Resolver | None) -> list[str] | None:
    f = src.find(_C + "f")
    if resolve is None or f is None or not (f.text or "").strip():
        return None
    return list(resolve((f.text or "").strip()))[:MAX_POINTS]


def _join_levels(count: int, levels: Sequence[Mapping[int, str]]) -> list[str | None]:
    """Multi-level categories (innermost level first) as "outer / inner" strings."""
    filled: list[list[str]] = []
    for pts in levels:
        last, column = "", []
        for i in range(count):
            last = pts.get(i, last)  # outer levels name only the first point of a group
            column.append(last)
        filled.append(column)
    out: list[str | None] = []
    for i in range(count):
        parts = [column[i] for column in reversed(filled) if column[i]]
        out.append(" / ".join(parts) if parts else None)
    return out


def _show(text: str | None, show: Callable[[float], str]) -> str | None:
    value = _number(text)
    if value is None:
        return text if text else None
    return show(value)


class _Reader:
    """Reads the data sources of one chart part (date system, resolver)."""

    def __init__(self, resolve: Resolver | None, date1904: bool) -> None:
        self.resolve = resolve
        self.date1904 = date1904

    def strings(self, data: etree._Element | None) -> list[str | None]:
        """Display strings of a name/category source (None for blank points)."""
        src = _source(data)
        if src is None:
            return []
        if src.tag == _C + "v":
            return [src.text or ""]
        tag = etree.QName(src).localname
        if tag == "multiLvlStrRef":
            return self._multi_level(src)
        cache = src if tag.endswith("Lit") else src.find(f"{_C}{tag[:3]}Cache")
        if cache is not None and cache.find(_C + "pt") is not None:
            count, pts = _points(cache)
            if tag.startswith("num"):
                code = cache.findtext(_C + "formatCode") or "General"
                show = _formatter(code, self.date1904)
                return [_show(pts.get(i), show) for i in range(count)]
            return _fill(count, pts)
        resolved = _resolved(src, self.resolve)
        if resolved is not None:
            return [s if s != "" else None for s in resolved]
        return _fill(*_points(cache)) if cache is not None else []

    def _multi_level(self, src: etree._Element) -> list[str | None]:
        cache = src.find(_C + "multiLvlStrCache")
        if cache is None or cache.find(f"{_C}lvl/{_C}pt") is None:
            resolved = _resolved(src, self.resolve)
            return [s or None for s in resolved] if resolved is not None else []
        count, _ = _points(cache)
        return _join_levels(count, [_points(lvl)[1] for lvl in cache.iterfind(_C + "lvl")])

    def numbers(self, data: etree._Element | None) -> list[int | float | None]:
        src = _source(data)
        if src is None:
            return []
        tag = etree.QName(src).localname
        cache = src if tag.endswith("Lit") else src.find(f"{_C}{tag[:3]}Cache")
        if tag == "multiLvlStrRef":
            cache = None
        if cache is not None and cache.find(_C + "pt") is not None:
            count, pts = _points(cache)
            return [_number(pts.get(i)) for i in range(count)]
        resolved = _resolved(src, self.resolve)
        if resolved is not None:
            return [_display_number(s) for s in resolved]
        return [None] * _points(cache)[0] if cache is not None else []


# --- chart structure ---------------------------------------------------------------------

_PLOT_TYPES = {
    "barChart": "bar",
    "bar3DChart": "bar",
    "lineChart": "line",
    "line3DChart": "line",
    "pieChart": "pie",
    "pie3DChart": "pie",
    "ofPieChart": "pie",
    "doughnutChart": "doughnut",
    "areaChart": "area",
    "area3DChart": "area",
    "scatterChart": "scatter",
    "bubbleChart": "bubble",
    "radarChart": "radar",
    "stockChart": "stock",
    "surfaceChart": "surface",
    "surface3DChart": "surface",
}


def _val(el: etree._Element | None, default: str | None = None) -> str | None:
    return default if el is None else el.get("val", default)


def _plot_type(plot: etree._Element) -> str:
    kind = _PLOT_TYPES[etree.QName(plot).localname]
    if kind == "bar":
        return "bar" if _val(plot.find(_C + "barDir"), "col") == "bar" else "column"
    return kind


def _series(ser: etree._Element, kind: str, reader: _Reader) -> Series:
    xy = kind in ("scatter", "bubble")
    cat = ser.find(_C + ("xVal" if xy else "cat"))
    val = ser.find(_C + ("yVal" if xy else "val"))
    names = reader.strings(ser.find(_C + "tx"))
    values = reader.numbers(val)
    categories = [c if c is not None else "" for c in reader.strings(cat)]
    if not categories and values:
        categories = [str(i + 1) for i in range(len(values))]
    out: Series = {
        "name": " ".join(n for n in names if n),
        "categories": categories,
        "values": values,
    }
    if kind == "bubble":
        out["sizes"] = reader.numbers(ser.find(_C + "bubbleSize"))
    return out


def _title(title: etree._Element | None, reader: _Reader) -> str:
    if title is None:
        return ""
    tx = title.find(_C + "tx")
    if tx is None:
        return ""
    rich = tx.find(_C + "rich")
    if rich is not None:
        return text_of(rich, " ")
    return " ".join(s for s in reader.strings(tx) if s).strip()


def _axis_titles(plot_area: etree._Element, reader: _Reader) -> AxisTitles:
    out = AxisTitles()
    for ax in _children(plot_area):
        if etree.QName(ax).localname not in ("catAx", "valAx", "dateAx", "serAx"):
            continue
        text = _title(ax.find(_C + "title"), reader)
        if not text:
            continue
        if _val(ax.find(_C + "axPos"), "b") in ("b", "t"):
            out["x2" if "x" in out else "x"] = text
        else:
            out["y2" if "y" in out else "y"] = text
    return out


def parse_chart(root: etree._Element, resolve: Resolver | None = None) -> ChartContent:
    """A chart part's root (`c:chartSpace` or `cx:chartSpace`) as chart element content."""
    if root.tag == _CX + "chartSpace":
        return _parse_chartex(root, resolve)
    date1904 = _val(root.find(_C + "date1904"), "0") in ("1", "true")
    reader = _Reader(resolve, date1904)
    chart = root if root.tag == _C + "chart" else root.find(_C + "chart")
    if chart is None:
        return {"chart_type": "unknown", "title": "", "series": [], "data_summary": ""}
    plot_area = chart.find(_C + "plotArea")
    plots = [] if plot_area is None else _children(plot_area)
    plots = [p for p in plots if etree.QName(p).localname in _PLOT_TYPES]
    types: list[str] = []
    series: list[Series] = []
    for plot in plots:
        kind = _plot_type(plot)
        if kind not in types:
            types.append(kind)
        series.extend(_series(s, kind, reader) for s in _children(plot) if s.tag == _C + "ser")
    chart_type = types[0] if types else "unknown"
    title = _title(chart.find(_C + "title"), reader)
    auto_deleted = _val(chart.find(_C + "autoTitleDeleted"), "0") in ("1", "true")
    out: ChartContent = {
        "chart_type": chart_type,
        "title": title,
        "series": series,
        "data_summary": data_summary(chart_type, series),
    }
    if not title and not auto_deleted and len(series) == 1 and series[0]["name"]:
        out["title"] = series[0]["name"]
        out["title_auto"] = True
    if len(types) > 1:
        out["chart_types"] = types
    if plots:
        first = plots[0]
        if first.find(_C + "barDir") is not None:
            out["bar_direction"] = _val(first.find(_C + "barDir"), "col") or "col"
        grouping = _val(first.find(_C + "grouping"))
        if grouping:
            out["grouping"] = grouping
    axes = _axis_titles(plot_area, reader) if plot_area is not None else AxisTitles()
    if axes:
        out["axis_titles"] = axes
    return out


_CX_TYPES = {
    "clusteredColumn": "histogram",
    "paretoLine": "pareto",
    "boxWhisker": "box_whisker",
    "regionMap": "map",
}


_CX_LEVELS = {_CX + "lvl", _CX + "numLvl", _CX + "strLvl"}


def _cx_dims(
    root: etree._Element, resolve: Resolver | None
) -> dict[str, dict[str, list[str | None]]]:
    """{data id: {dimension type: display strings}} from cx:chartData."""
    out: dict[str, dict[str, list[str | None]]] = {}
    for data in root.iterfind(f"{_CX}chartData/{_CX}data"):
        dims: dict[str, list[str | None]] = {}
        for dim in data:
            if dim.tag not in (_CX + "strDim", _CX + "numDim"):
                continue
            kind = dim.get("type", "cat" if dim.tag == _CX + "strDim" else "val")
            levels = [_points(lvl, _CX) for lvl in dim if lvl.tag in _CX_LEVELS]
            if not any(pts for _, pts in levels):
                formula = (dim.findtext(_CX + "f") or "").strip()
                if resolve is not None and formula:
                    dims.setdefault(kind, [v or None for v in resolve(formula)[:MAX_POINTS]])
                continue
            count = max(n for n, _ in levels)
            if dim.tag == _CX + "numDim":
                dims.setdefault(kind, _fill(*levels[0]))
            else:
                dims.setdefault(kind, _join_levels(count, [pts for _, pts in levels]))
        out[data.get("id", "0")] = dims
    return out


def _cx_text(owner: etree._Element | None, resolve: Resolver | None) -> str:
    """The text of a cx:title or cx:tx: rich text, else `cx:v`, else its formula resolved."""
    if owner is None:
        return ""
    for rich in owner.iter(_CX + "rich"):
        text = text_of(rich, " ")
        if text:
            return text
    for v in owner.iter(_CX + "v"):
        text = " ".join((v.text or "").split())
        if text:
            return text
    formula = (owner.findtext(f".//{_CX}f") or "").strip()
    if resolve is not None and formula:
        return " ".join(t for t in resolve(formula) if t)
    return ""


def _parse_chartex(root: etree._Element, resolve: Resolver | None) -> ChartContent:
    """An Office 2016 chart (`cx:chartSpace`: waterfall, treemap, funnel...) from its data."""
    dims = _cx_dims(root, resolve)
    series: list[Series] = []
    types: list[str] = []
    for ser in root.iterfind(f"{_CX}chart/{_CX}plotArea/{_CX}plotAreaRegion/{_CX}series"):
        layout = ser.get("layoutId", "unknown")
        kind = _CX_TYPES.get(layout, layout)
        if kind not in types:
            types.append(kind)
        data = dims.get(_val(ser.find(_CX + "dataId"), "0") or "0", {})
        raw = data.get("val") or data.get("size") or data.get("y") or []
        cats = data.get("cat") or data.get("entityId") or data.get("x") or []
        series.append(
            {
                "name": _cx_text(ser.find(_CX + "tx"), resolve),
                "categories": [c or "" for c in cats],
                "values": [None if v is None else _display_number(v) for v in raw],
            }
        )
    chart_type = types[0] if types else "unknown"
    title = _cx_text(root.find(f"{_CX}chart/{_CX}title"), resolve)
    out: ChartContent = {
        "chart_type": chart_type,
        "title": title,
        "series": series,
        "data_summary": data_summary(chart_type, series),
    }
    if len(types) > 1:
        out["chart_types"] = types
    return out


# --- SmartArt ----------------------------------------------------------------------------


def smartart_nodes(data_root: etree._Element) -> list[str]:
    """The node texts of a `dgm:dataModel`, in document order, empty ones dropped.

    Nodes are the points of type `node` (the default) and `asst` (an org chart's assistant);
    connections (`parTrans`, `sibTrans`), the document point and presentation points are not.
    """
    out = []
    for pt in data_root.iter(_DGM + "pt"):
        if pt.get("type", "node") not in ("node", "asst"):
            continue
        text = text_of(pt.find(_DGM + "t"))
        if text:
            out.append(text)
    return out


def smartart_drawing_texts(drawing_root: etree._Element) -> list[str]:
    """The shape texts of a SmartArt drawing part (`dsp:drawing`, …/diagrams/drawingN.xml).

    The drawing is PowerPoint's rendering cache of the diagram; use it when the data model
    holds no text (some producers write the text only there). In drawing order.
    """
    out = []
    for body in drawing_root.iter(_DSP + "txBody"):
        text = text_of(body)
        if text:
            out.append(text)
    return out
