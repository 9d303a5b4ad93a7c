"""DrawingML shared parts: charts, SmartArt, text, the public API, and a corpus sweep.

Data summaries, OMML and pictures have their own test modules (they mirror the modules).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from lxml import etree

from dpe_server.extractors import Limits
from dpe_server.extractors.kit.diagrams import diagram_content
from dpe_server.extractors.kit.package import NS, Package
from dpe_server.extractors.ooxml import drawingml
from dpe_server.extractors.ooxml.drawingml import (
    MAX_POINTS,
    omml_to_linear,
    parse_chart,
    smartart_drawing_texts,
    smartart_nodes,
    text_of,
)
from dpe_server.model.errors import ExtractionError

XMLNS = (
    f'xmlns:c="{NS["c"]}" xmlns:a="{NS["a"]}" xmlns:mc="{NS["mc"]}" '
    f'xmlns:dgm="{NS["dgm"]}" xmlns:m="{NS["m"]}" '
    'xmlns:c14="http://schemas.microsoft.com/office/drawing/2007/8/2/chart" '
    'xmlns:c15="http://schemas.microsoft.com/office/drawing/2012/chart" '
    'xmlns:cx="http://schemas.microsoft.com/office/drawing/2014/chartex" '
    'xmlns:dsp="http://schemas.microsoft.com/office/drawing/2008/diagram"'
)


def xml(text: str) -> etree._Element:
    """`text` parsed, its root given every namespace prefix used here."""
    head, rest = re.match(r"<([\w:]+)(.*)", text, re.S).groups()  # type: ignore[union-attr]
    return etree.fromstring(f"<{head} {XMLNS}{rest}")


@pytest.mark.parametrize(
    "name",
    [
        "parse_chart",
        "data_summary",
        "smartart_nodes",
        "diagram_content",
        "omml_to_linear",
        "image_mime",
        "image_size",
        "emu_to_px",
        "EMU_PER_PX",
        "text_of",
    ],
)
def test_drawingml_exports_shared_api(name: str) -> None:
    assert name in drawingml.__all__
    assert hasattr(drawingml, name)


# --- chart builders ----------------------------------------------------------------------


def pts(values: list[str | None]) -> str:
    body = "".join(
        f'<c:pt idx="{i}"><c:v>{v}</c:v></c:pt>' for i, v in enumerate(values) if v is not None
    )
    return f'<c:ptCount val="{len(values)}"/>{body}'


def str_ref(f: str, values: list[str | None] | None) -> str:
    cache = "" if values is None else f"<c:strCache>{pts(values)}</c:strCache>"
    return f"<c:strRef><c:f>{f}</c:f>{cache}</c:strRef>"


def num_ref(f: str, values: list[str | None] | None, code: str = "General") -> str:
    cache = (
        ""
        if values is None
        else f"<c:numCache><c:formatCode>{code}</c:formatCode>{pts(values)}</c:numCache>"
    )
    return f"<c:numRef><c:f>{f}</c:f>{cache}</c:numRef>"


def ser(
    name: str | None,
    cats: list[str | None] | None,
    vals: list[str | None] | None,
    *,
    xy: bool = False,
) -> str:
    tx = "" if name is None else f"<c:tx>{str_ref('S!$B$1', [name])}</c:tx>"
    cat_tag, val_tag = ("c:xVal", "c:yVal") if xy else ("c:cat", "c:val")
    cat = "" if cats is None else f"<{cat_tag}>{str_ref('S!$A$2:$A$9', cats)}</{cat_tag}>"
    val = f"<{val_tag}>{num_ref('S!$B$2:$B$9', vals)}</{val_tag}>"
    return f'<c:ser><c:idx val="0"/><c:order val="0"/>{tx}{cat}{val}</c:ser>'


def chart(plots: str, title: str = "", extra: str = "", axes: str = "") -> etree._Element:
    return xml(
        f'<c:chartSpace><c:date1904 val="0"/>{extra}<c:chart>{title}'
        f"<c:plotArea><c:layout/>{plots}{axes}</c:plotArea></c:chart></c:chartSpace>"
    )


def rich_title(*runs: str) -> str:
    rs = "".join(f"<a:r><a:t>{r}</a:t></a:r>" for r in runs)
    return f"<c:title><c:tx><c:rich><a:bodyPr/><a:p>{rs}</a:p></c:rich></c:tx></c:title>"


QUARTERS: list[str | None] = ["Q1", "Q2", "Q3", "Q4"]
REVENUE: list[str | None] = ["1250", "1300", "1420", "1560"]


def bar(bar_dir: str, *series: str) -> str:
    head = f'<c:barChart><c:barDir val="{bar_dir}"/><c:grouping val="clustered"/>'
    return head + "".join(series) + "</c:barChart>"


# --- charts ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("plot", "expected"),
    [
        pytest.param(bar("col", ser("Revenue", QUARTERS, REVENUE)), "column", id="column"),
        pytest.param(bar("bar", ser("Revenue", QUARTERS, REVENUE)), "bar", id="bar"),
        pytest.param(
            "<c:bar3DChart>" + ser("R", QUARTERS, REVENUE) + "</c:bar3DChart>",
            "column",
            id="bar3d-default-col",
        ),
        pytest.param(
            "<c:lineChart>" + ser("R", QUARTERS, REVENUE) + "</c:lineChart>", "line", id="line"
        ),
        pytest.param(
            "<c:pieChart>" + ser("R", QUARTERS, REVENUE) + "</c:pieChart>", "pie", id="pie"
        ),
        pytest.param(
            "<c:doughnutChart>" + ser("R", QUARTERS, REVENUE) + "</c:doughnutChart>",
            "doughnut",
            id="doughnut",
        ),
        pytest.param(
            "<c:areaChart>" + ser("R", QUARTERS, REVENUE) + "</c:areaChart>", "area", id="area"
        ),
        pytest.param(
            "<c:radarChart>" + ser("R", QUARTERS, REVENUE) + "</c:radarChart>", "radar", id="radar"
        ),
        pytest.param(
            "<c:scatterChart>" + ser("Y", ["1", "2"], ["3", "4"], xy=True) + "</c:scatterChart>",
            "scatter",
            id="scatter",
        ),
        pytest.param("", "unknown", id="no-plot"),
    ],
)
def test_parse_chart_type(plot: str, expected: str) -> None:
    assert parse_chart(chart(plot))["chart_type"] == expected


def test_parse_chart_series_from_cache() -> None:
    out = parse_chart(chart(bar("col", ser("Revenue", QUARTERS, REVENUE))))
    assert out["series"] == [
        {
            "name": "Revenue",
            "categories": ["Q1", "Q2", "Q3", "Q4"],
            "values": [1250, 1300, 1420, 1560],
        }
    ]


def test_parse_chart_values_int_float_and_blank() -> None:
    out = parse_chart(chart(bar("col", ser("R", QUARTERS, ["1.0", "2.5", None, "#N/A"]))))
    values = out["series"][0]["values"]
    assert values == [1, 2.5, None, None]
    assert isinstance(values[0], int)


def test_parse_chart_scatter_x_values_are_categories() -> None:
    plot = "<c:scatterChart>" + ser("Y", ["0.5", "1.5"], ["3", "4"], xy=True) + "</c:scatterChart>"
    series = parse_chart(chart(plot))["series"][0]
    assert (series["categories"], series["values"]) == (["0.5", "1.5"], [3, 4])


def test_parse_chart_numeric_categories_use_format_code() -> None:
    cat = f"<c:cat>{num_ref('S!$A$2:$A$3', ['45292', '45323'], 'mmm yy')}</c:cat>"
    series = (
        f"<c:ser><c:idx val='0'/>{cat}<c:val>{num_ref('S!$B$2:$B$3', ['1', '2'])}</c:val></c:ser>"
    )
    out = parse_chart(chart(f"<c:lineChart>{series}</c:lineChart>"))
    assert out["series"][0]["categories"] == ["2024-01-01", "2024-02-01"]


def test_parse_chart_combo_lists_every_type() -> None:
    plots = bar("col", ser("Revenue", QUARTERS, REVENUE)) + (
        "<c:lineChart>" + ser("Margin", QUARTERS, ["0.1", "0.2", "0.15", "0.3"]) + "</c:lineChart>"
    )
    out = parse_chart(chart(plots, rich_title("Combo")))
    assert (out["chart_type"], out["chart_types"]) == ("column", ["column", "line"])
    assert [s["name"] for s in out["series"]] == ["Revenue", "Margin"]


def test_parse_chart_missing_cache_uses_resolve() -> None:
    calls: list[str] = []
    sheet = {
        "S!$B$1": ["Units"],
        "S!$A$2:$A$9": ["North", "South", ""],
        "S!$B$2:$B$9": ["1,250", "12%", ""],
    }

    def resolve(ref: str) -> list[str]:
        calls.append(ref)
        return sheet[ref]

    plot = (
        "<c:barChart>"
        + ser(None, None, None).replace(
            "<c:val>", "<c:cat>" + str_ref("S!$A$2:$A$9", None) + "</c:cat><c:val>"
        )
        + "</c:barChart>"
    )
    plot = plot.replace("<c:idx", f"<c:tx>{str_ref('S!$B$1', None)}</c:tx><c:idx", 1)
    series = parse_chart(chart(plot), resolve)["series"][0]
    assert series == {
        "name": "Units",
        "categories": ["North", "South", ""],
        "values": [1250, 0.12, None],
    }
    assert sorted(calls) == ["S!$A$2:$A$9", "S!$B$1", "S!$B$2:$B$9"]


def test_parse_chart_missing_cache_without_resolve_is_empty() -> None:
    out = parse_chart(chart(bar("col", ser("R", None, None))))
    assert out["series"][0]["values"] == []


def test_parse_chart_literals() -> None:
    lit = (
        "<c:ser><c:idx val='0'/><c:tx><c:v>Literal</c:v></c:tx>"
        "<c:cat><c:strLit><c:ptCount val='2'/><c:pt idx='0'><c:v>a</c:v></c:pt>"
        "<c:pt idx='1'><c:v>b</c:v></c:pt></c:strLit></c:cat>"
        "<c:val><c:numLit><c:ptCount val='2'/><c:pt idx='0'><c:v>5</c:v></c:pt>"
        "<c:pt idx='1'><c:v>7</c:v></c:pt></c:numLit></c:val></c:ser>"
    )
    series = parse_chart(chart(f"<c:lineChart>{lit}</c:lineChart>"))["series"][0]
    assert series == {"name": "Literal", "categories": ["a", "b"], "values": [5, 7]}


def test_parse_chart_multi_level_categories() -> None:
    cache = (
        "<c:multiLvlStrRef><c:f>S!$A$2:$B$5</c:f><c:multiLvlStrCache><c:ptCount val='4'/>"
        "<c:lvl><c:pt idx='0'><c:v>Q1</c:v></c:pt><c:pt idx='1'><c:v>Q2</c:v></c:pt>"
        "<c:pt idx='2'><c:v>Q1</c:v></c:pt><c:pt idx='3'><c:v>Q2</c:v></c:pt></c:lvl>"
        "<c:lvl><c:pt idx='0'><c:v>2023</c:v></c:pt><c:pt idx='2'><c:v>2024</c:v></c:pt></c:lvl>"
        "</c:multiLvlStrCache></c:multiLvlStrRef>"
    )
    val = f"<c:val>{num_ref('x', REVENUE)}</c:val>"
    s = f"<c:ser><c:idx val='0'/><c:cat>{cache}</c:cat>{val}</c:ser>"
    cats = parse_chart(chart(bar("col", s)))["series"][0]["categories"]
    assert cats == ["2023 / Q1", "2023 / Q2", "2024 / Q1", "2024 / Q2"]


TITLE_CASES = [
    pytest.param(
        rich_title("Sales", " 2024"), "", [ser("A", QUARTERS, REVENUE)], "Sales 2024", id="rich"
    ),
    pytest.param(
        f"<c:title><c:tx>{str_ref('S!$A$1', ['From cell'])}</c:tx></c:title>",
        "",
        [ser("A", QUARTERS, REVENUE)],
        "From cell",
        id="strref-cache",
    ),
    pytest.param("", "", [ser("Only", QUARTERS, REVENUE)], "Only", id="auto-single-series"),
    pytest.param(
        "", '<c:autoTitleDeleted val="1"/>', [ser("Only", QUARTERS, REVENUE)], "", id="auto-deleted"
    ),
    pytest.param(
        "", "", [ser("A", QUARTERS, REVENUE), ser("B", QUARTERS, REVENUE)], "", id="multi-series"
    ),
    pytest.param(
        "<c:title><c:overlay val='0'/></c:title>",
        "",
        [ser("A", QUARTERS, REVENUE), ser("B", QUARTERS, REVENUE)],
        "",
        id="title-without-text",
    ),
]


@pytest.mark.parametrize(("title", "after", "series", "expected"), TITLE_CASES)
def test_parse_chart_title(title: str, after: str, series: list[str], expected: str) -> None:
    root = xml(
        f"<c:chartSpace><c:chart>{title}{after}<c:plotArea>{bar('col', *series)}"
        "</c:plotArea></c:chart></c:chartSpace>"
    )
    assert parse_chart(root)["title"] == expected


def test_parse_chart_title_from_resolve_when_no_cache() -> None:
    title = f"<c:title><c:tx>{str_ref('S!$A$1', None)}</c:tx></c:title>"
    out = parse_chart(chart(bar("col", ser("A", QUARTERS, REVENUE)), title), lambda f: ["T1"])
    assert out["title"] == "T1"


def test_parse_chart_auto_title_is_flagged() -> None:
    out = parse_chart(chart(bar("col", ser("Only", QUARTERS, REVENUE))))
    assert out.get("title_auto") is True


def test_parse_chart_alternate_content_and_extensions_ignored() -> None:
    extra = (
        '<mc:AlternateContent><mc:Choice Requires="c14"><c14:style val="102"/></mc:Choice>'
        '<mc:Fallback><c:style val="2"/></mc:Fallback></mc:AlternateContent>'
    )
    filtered = (
        '<c:extLst><c:ext uri="{02D57815-91ED-43cb-92C2-25804820EDAC}">'
        f"<c15:filteredBarSeries>{ser('Hidden', QUARTERS, REVENUE)}</c15:filteredBarSeries>"
        "</c:ext></c:extLst>"
    )
    plot = bar("col", ser("Shown", QUARTERS, REVENUE)).replace(
        "</c:barChart>", filtered + "</c:barChart>"
    )
    out = parse_chart(chart(plot, extra=extra))
    assert [s["name"] for s in out["series"]] == ["Shown"]


def test_parse_chart_plot_inside_alternate_content() -> None:
    inner = bar("bar", ser("A", QUARTERS, REVENUE))
    plot = f"<mc:AlternateContent><mc:Fallback>{inner}</mc:Fallback></mc:AlternateContent>"
    assert parse_chart(chart(plot))["chart_type"] == "bar"


def test_parse_chart_axis_titles_by_position() -> None:
    axes = (
        '<c:catAx><c:axId val="1"/><c:title><c:tx><c:rich><a:p><a:r><a:t>Quarter</a:t></a:r>'
        '</a:p></c:rich></c:tx></c:title><c:axPos val="b"/></c:catAx>'
        '<c:valAx><c:axId val="2"/><c:title><c:tx><c:rich><a:p><a:r><a:t>USD</a:t></a:r>'
        '</a:p></c:rich></c:tx></c:title><c:axPos val="l"/></c:valAx>'
    )
    out = parse_chart(chart(bar("col", ser("A", QUARTERS, REVENUE)), axes=axes))
    assert out["axis_titles"] == {"x": "Quarter", "y": "USD"}


def test_parse_chart_bubble_sizes() -> None:
    s = ser("B", ["1", "2"], ["3", "4"], xy=True).replace(
        "</c:ser>", f"<c:bubbleSize>{num_ref('z', ['10', '20'])}</c:bubbleSize></c:ser>"
    )
    series = parse_chart(chart(f"<c:bubbleChart>{s}</c:bubbleChart>"))["series"][0]
    assert series["sizes"] == [10, 20]


def test_parse_chart_chartex_waterfall() -> None:
    root = xml(
        "<cx:chartSpace><cx:chartData><cx:data id='0'>"
        "<cx:strDim type='cat'><cx:f>S!$A$2:$A$4</cx:f><cx:lvl ptCount='3'>"
        "<cx:pt idx='0'>Start</cx:pt><cx:pt idx='1'>Gain</cx:pt><cx:pt idx='2'>End</cx:pt>"
        "</cx:lvl></cx:strDim><cx:numDim type='val'><cx:f>S!$B$2:$B$4</cx:f>"
        "<cx:lvl ptCount='3' formatCode='General'><cx:pt idx='0'>100</cx:pt>"
        "<cx:pt idx='1'>20</cx:pt><cx:pt idx='2'>120</cx:pt></cx:lvl></cx:numDim>"
        "</cx:data></cx:chartData><cx:chart><cx:title><cx:tx><cx:txData><cx:v>Bridge</cx:v>"
        "</cx:txData></cx:tx></cx:title><cx:plotArea><cx:plotAreaRegion>"
        "<cx:series layoutId='waterfall'><cx:tx><cx:txData><cx:f>S!$B$1</cx:f><cx:v>Cash</cx:v>"
        "</cx:txData></cx:tx><cx:dataId val='0'/></cx:series></cx:plotAreaRegion></cx:plotArea>"
        "</cx:chart></cx:chartSpace>"
    )
    out = parse_chart(root)
    assert (out["chart_type"], out["title"]) == ("waterfall", "Bridge")
    assert out["series"] == [
        {"name": "Cash", "categories": ["Start", "Gain", "End"], "values": [100, 20, 120]}
    ]


def test_parse_chart_declared_point_count_is_capped() -> None:
    huge = "<c:numLit><c:ptCount val='999999999'/></c:numLit>"
    s = f"<c:ser><c:idx val='0'/><c:val>{huge}</c:val></c:ser>"
    values = parse_chart(chart(f"<c:lineChart>{s}</c:lineChart>"))["series"][0]["values"]
    assert len(values) == MAX_POINTS


def test_parse_chart_without_chart_element() -> None:
    out = parse_chart(xml("<c:chartSpace><c:roundedCorners val='0'/></c:chartSpace>"))
    assert (out["chart_type"], out["series"]) == ("unknown", [])


def test_parse_chart_date1904_categories() -> None:
    cat = f"<c:cat>{num_ref('S!$A$2', ['0'], 'yyyy-mm-dd')}</c:cat>"
    s = f"<c:ser><c:idx val='0'/>{cat}<c:val>{num_ref('S!$B$2', ['1'])}</c:val></c:ser>"
    root = xml(
        "<c:chartSpace><c:date1904 val='1'/><c:chart><c:plotArea>"
        f"<c:lineChart>{s}</c:lineChart></c:plotArea></c:chart></c:chartSpace>"
    )
    assert parse_chart(root)["series"][0]["categories"] == ["1904-01-01"]


HOSTILE = [
    pytest.param("<c:pt idx='x'><c:v>1</c:v></c:pt>", id="bad-idx"),
    pytest.param("<c:pt idx='-3'><c:v>1</c:v></c:pt>", id="negative-idx"),
    pytest.param("<c:pt idx='0'/>", id="no-v"),
    pytest.param("<c:ptCount val='lots'/><c:pt idx='0'><c:v>1</c:v></c:pt>", id="bad-count"),
    pytest.param("<c:pt idx='0'><c:v>1e999</c:v></c:pt>", id="overflow"),
    pytest.param("<c:pt idx='0'><c:v>NaN</c:v></c:pt>", id="nan"),
]


@pytest.mark.parametrize("points", HOSTILE)
@pytest.mark.parametrize("code", ["General", "yyyy-mm-dd", "0.00%", "0." + "0" * 400])
def test_parse_chart_survives_hostile_points(points: str, code: str) -> None:
    num = (
        f"<c:numRef><c:f>x</c:f><c:numCache><c:formatCode>{code}</c:formatCode>{points}"
        "</c:numCache></c:numRef>"
    )
    s = f"<c:ser><c:cat>{num}</c:cat><c:val>{num}</c:val></c:ser>"
    out = parse_chart(chart(f"<c:lineChart>{s}</c:lineChart>"))
    values = out["series"][0]["values"]
    assert all(v is None or isinstance(v, int | float) for v in values)
    assert all(len(c) < 40 for c in out["series"][0]["categories"])


def test_parse_chart_has_data_summary() -> None:
    out = parse_chart(chart(bar("col", ser("Revenue", QUARTERS, REVENUE))))
    assert out["data_summary"] == (
        "Revenue rises from 1,250 (Q1) to 1,560 (Q4); highest 1,560 (Q4), lowest 1,250 (Q1)."
    )


# --- SmartArt ----------------------------------------------------------------------------


def dgm_pt(text: str, type_: str | None = None) -> str:
    kind = f' type="{type_}"' if type_ else ""
    paras = "".join(f"<a:p><a:r><a:t>{p}</a:t></a:r></a:p>" for p in text.split("|"))
    return f'<dgm:pt modelId="x"{kind}><dgm:t><a:bodyPr/>{paras}</dgm:t></dgm:pt>'


def test_smartart_nodes_keep_nodes_in_order() -> None:
    root = xml(
        "<dgm:dataModel><dgm:ptLst>"
        + dgm_pt("Doc", "doc")
        + dgm_pt("Plan")
        + dgm_pt("ignored", "parTrans")
        + dgm_pt("ignored", "sibTrans")
        + dgm_pt("Build", "node")
        + dgm_pt("ignored", "pres")
        + dgm_pt("")
        + dgm_pt("Two|lines")
        + "</dgm:ptLst></dgm:dataModel>"
    )
    assert smartart_nodes(root) == ["Plan", "Build", "Two\nlines"]


def test_diagram_content_summary() -> None:
    out = diagram_content(["Plan", "Build", "Test", "Ship"])
    assert out == {
        "kind": "smartart",
        "nodes": ["Plan", "Build", "Test", "Ship"],
        "data_summary": "SmartArt with 4 nodes: Plan → Build → Test → Ship",
    }


def test_diagram_content_summary_cut_after_eight_nodes() -> None:
    summary = diagram_content([f"N{i}" for i in range(12)])["data_summary"]
    assert summary.endswith("N7 → … (+4 more)")


def test_diagram_content_empty() -> None:
    assert diagram_content([])["data_summary"] == "SmartArt with no text"


def test_smartart_nodes_include_assistant() -> None:
    root = xml(
        "<dgm:dataModel><dgm:ptLst>"
        f"{dgm_pt('Boss')}{dgm_pt('Aide', 'asst')}"
        "</dgm:ptLst></dgm:dataModel>"
    )
    assert smartart_nodes(root) == ["Boss", "Aide"]


def test_smartart_drawing_texts_in_order() -> None:
    root = xml(
        "<dsp:drawing><dsp:spTree>"
        "<dsp:sp><dsp:txBody><a:p><a:r><a:t>First</a:t></a:r></a:p></dsp:txBody></dsp:sp>"
        "<dsp:sp><dsp:txBody><a:p/></dsp:txBody></dsp:sp>"
        "<dsp:sp><dsp:txBody><a:p><a:r><a:t>Second</a:t></a:r></a:p></dsp:txBody></dsp:sp>"
        "</dsp:spTree></dsp:drawing>"
    )
    assert smartart_drawing_texts(root) == ["First", "Second"]


# --- text ---------------------------------------------------------------------------------


def test_text_of_joins_runs_fields_and_breaks() -> None:
    body = xml(
        "<a:txBody><a:bodyPr/><a:p><a:r><a:t>Hello </a:t></a:r><a:fld><a:t>1</a:t></a:fld></a:p>"
        "<a:p><a:r><a:t>two</a:t></a:r><a:br/><a:r><a:t>lines</a:t></a:r></a:p></a:txBody>"
    )
    assert text_of(body) == "Hello 1\ntwo\nlines"


def test_text_of_none_is_empty() -> None:
    assert text_of(None) == ""


# --- corpus -------------------------------------------------------------------------------

_KINDS: dict[str, Callable[[str], bool]] = {
    "chart": lambda n: re.search(r"/charts/chart(ex)?\d*\.xml$", n, re.I) is not None,
    "diagram": lambda n: re.search(r"/diagrams/data\d*\.xml$", n, re.I) is not None,
    "math": lambda n: re.match(r"(word|ppt/slides)/[^/]+\.xml$", n) is not None,
}


def _sweep(path: Path, counts: dict[str, int]) -> None:
    with path.open("rb") as f:
        try:
            pkg = Package(f, path.suffix.lstrip("."), Limits())
        except ExtractionError:
            return
        with pkg:
            for name in pkg.names():
                kind = next((k for k, test in _KINDS.items() if test(name)), None)
                if kind is None:
                    continue
                try:
                    root = pkg.xml(name)
                except ExtractionError:
                    continue
                if kind == "chart":
                    out = parse_chart(root)
                    assert out["chart_type"], name
                    assert isinstance(out["data_summary"], str)
                elif kind == "diagram":
                    assert isinstance(diagram_content(smartart_nodes(root))["data_summary"], str)
                else:
                    for m in root.iter(f"{{{NS['m']}}}oMathPara", f"{{{NS['m']}}}oMath"):
                        assert isinstance(omml_to_linear(m), str)
                        counts["math"] += 1
                    continue
                counts[kind] += 1


@pytest.mark.corpus
def test_corpus_parts_parse(corpus: Path) -> None:
    counts = {"chart": 0, "diagram": 0, "math": 0}
    for folder in ("xlsx", "pptx", "docx"):
        for path in sorted((corpus / folder).iterdir()):
            _sweep(path, counts)
    print(f"corpus DrawingML parts parsed: {counts}")
    assert counts["chart"] > 0
    assert counts["diagram"] > 0
    assert counts["math"] > 0


CX_VARIANTS = [
    pytest.param(
        "<cx:numDim type='size'><cx:numLvl ptCount='2'><cx:pt idx='0'>22</cx:pt>"
        "<cx:pt idx='1'>8</cx:pt></cx:numLvl></cx:numDim>",
        "<cx:tx><cx:rich><a:p><a:r><a:t>Tree</a:t></a:r></a:p></cx:rich></cx:tx>",
        [22, 8],
        "Tree",
        id="numLvl-size-rich-title",
    ),
    pytest.param(
        "<cx:numDim type='val'><cx:f>S!$B$2:$B$3</cx:f></cx:numDim>",
        "<cx:rich><a:p><a:r><a:t>Direct</a:t></a:r></a:p></cx:rich>",
        [5, 1250],
        "Direct",
        id="no-cache-resolved",
    ),
]


@pytest.mark.parametrize(("dim", "title", "values", "expected_title"), CX_VARIANTS)
def test_parse_chart_chartex_variants(
    dim: str, title: str, values: list[int], expected_title: str
) -> None:
    root = xml(
        f"<cx:chartSpace><cx:chartData><cx:data id='3'>{dim}</cx:data></cx:chartData>"
        f"<cx:chart><cx:title>{title}</cx:title><cx:plotArea><cx:plotAreaRegion>"
        "<cx:series layoutId='treemap'><cx:tx><cx:txData><cx:f>S!$B$1</cx:f></cx:txData>"
        "</cx:tx><cx:dataId val='3'/></cx:series></cx:plotAreaRegion></cx:plotArea>"
        "</cx:chart></cx:chartSpace>"
    )
    cells = {"S!$B$2:$B$3": ["5", "1,250"], "S!$B$1": ["Size"]}
    out = parse_chart(root, lambda ref: cells[ref])
    assert (out["title"], out["series"][0]["values"]) == (expected_title, values)
    assert out["series"][0]["name"] == "Size"


def test_parse_chart_chartex_without_data_does_not_fail() -> None:
    root = xml(
        "<cx:chartSpace><cx:chart><cx:plotArea><cx:plotAreaRegion>"
        "<cx:series layoutId='funnel'/></cx:plotAreaRegion></cx:plotArea></cx:chart>"
        "</cx:chartSpace>"
    )
    out = parse_chart(root)
    assert (out["chart_type"], out["series"][0]["values"]) == ("funnel", [])
