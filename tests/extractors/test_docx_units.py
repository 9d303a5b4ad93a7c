"""Small docx packages built in code, one behaviour each: styles, numbering, page planning,
table grids, fields, limits, Strict namespaces, HTML chunks."""

from __future__ import annotations

import io
import zipfile

import pytest
from lxml import etree

from dpe_server.extractors import DEFAULT_LIMITS, Limits
from dpe_server.extractors.docx.extract import extract, probe
from dpe_server.extractors.docx.numbering import Numbering
from dpe_server.extractors.docx.parts import html_blocks
from dpe_server.extractors.docx.styles import Styles
from dpe_server.extractors.docx.xml import W_NS
from dpe_server.extractors.kit.a1 import col_letters
from dpe_server.extractors.kit.pages import MAX_BLOCKS, MAX_CHARS, TITLE_LEVEL, Block, plan_pages
from dpe_server.extractors.ooxml.strict import from_strict
from dpe_server.model.tree import TABLE_BLOCK_ROWS, Category, Document

NS = f'xmlns:w="{W_NS}"'
REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"


def docx(body: str, styles: str = "", numbering: str = "") -> bytes:
    """A minimal package: document.xml with `body`, optional styles and numbering parts."""
    rels = [
        f'<Relationship Id="rS" Type="{REL}/styles" Target="styles.xml"/>' if styles else "",
        f'<Relationship Id="rN" Type="{REL}/numbering" Target="numbering.xml"/>'
        if numbering
        else "",
    ]
    parts = {
        "_rels/.rels": '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/'
        f'relationships"><Relationship Id="rId1" Type="{REL}/officeDocument" '
        'Target="word/document.xml"/></Relationships>',
        "word/_rels/document.xml.rels": '<Relationships xmlns="http://schemas.openxmlformats.'
        f'org/package/2006/relationships">{"".join(rels)}</Relationships>',
        "word/document.xml": f"<w:document {NS}><w:body>{body}</w:body></w:document>",
    }
    if styles:
        parts["word/styles.xml"] = f"<w:styles {NS}>{styles}</w:styles>"
    if numbering:
        parts["word/numbering.xml"] = f"<w:numbering {NS}>{numbering}</w:numbering>"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, text in parts.items():
            z.writestr(name, text)
    return buf.getvalue()


def read(
    body: str, styles: str = "", numbering: str = "", limits: Limits = DEFAULT_LIMITS
) -> Document:
    return extract(io.BytesIO(docx(body, styles, numbering)), limits)


def p(text: str, style: str = "", ppr: str = "") -> str:
    pstyle = f'<w:pStyle w:val="{style}"/>' if style else ""
    props = f"<w:pPr>{pstyle}{ppr}</w:pPr>" if pstyle or ppr else ""
    return f'<w:p>{props}<w:r><w:t xml:space="preserve">{text}</w:t></w:r></w:p>'


def style(sid: str, name: str, extra: str = "", kind: str = "paragraph") -> str:
    return f'<w:style w:type="{kind}" w:styleId="{sid}"><w:name w:val="{name}"/>{extra}</w:style>'


HEADINGS = (
    style("Normal", "Normal").replace("<w:style ", '<w:style w:default="1" ')
    + style("Titel", "Title")
    + style("berschrift1", "heading 1")
    + style("berschrift2", "heading 2")
    + style("Mine", "My custom", '<w:basedOn w:val="berschrift2"/>')
    + style("Loop1", "loop one", '<w:basedOn w:val="Loop2"/>')
    + style("Loop2", "loop two", '<w:basedOn w:val="Loop1"/>')
    + style("Src", "Source Block")
    + style("Mono", "Mono para", '<w:rPr><w:rFonts w:ascii="Consolas"/></w:rPr>')
)


# --- styles and numbering ----------------


@pytest.mark.parametrize(
    ("style_id", "level", "code"),
    [
        ("berschrift1", 1, False),
        ("berschrift2", 2, False),
        ("Mine", 2, False),
        ("Titel", TITLE_LEVEL, False),
        ("Normal", None, False),
        ("Loop1", None, False),
        ("Src", None, True),
        ("Mono", None, True),
        ("Missing", None, False),
    ],
    ids=[
        "localized-h1",
        "localized-h2",
        "based-on",
        "title",
        "normal",
        "cycle",
        "name",
        "font",
        "missing-falls-back-to-default",
    ],
)
def test_styles_resolve(style_id: str, level: int | None, code: bool) -> None:
    styles = Styles(etree.fromstring(f"<w:styles {NS}>{HEADINGS}</w:styles>"))
    info = styles.info(style_id)
    assert (info.heading_level, info.code) == (level, code)


NUMBERING = (
    '<w:abstractNum w:abstractNumId="0"><w:lvl w:ilvl="0"><w:numFmt w:val="bullet"/></w:lvl>'
    '<w:lvl w:ilvl="1"><w:numFmt w:val="decimal"/></w:lvl></w:abstractNum>'
    '<w:abstractNum w:abstractNumId="1"><w:lvl w:ilvl="0"><w:numFmt w:val="none"/></w:lvl>'
    "</w:abstractNum>"
    '<w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num>'
    '<w:num w:numId="2"><w:abstractNumId w:val="0"/><w:lvlOverride w:ilvl="0"><w:lvl '
    'w:ilvl="0"><w:numFmt w:val="lowerRoman"/></w:lvl></w:lvlOverride></w:num>'
    '<w:num w:numId="3"><w:abstractNumId w:val="1"/></w:num>'
)


@pytest.mark.parametrize(
    ("num_id", "ilvl", "is_list", "ordered"),
    [
        ("1", 0, True, False),
        ("1", 1, True, True),
        ("2", 0, True, True),
        ("3", 0, False, False),
        ("0", 0, False, False),
        ("9", 0, False, False),
    ],
    ids=["bullet", "decimal-level", "override", "none-format", "num-zero", "unknown"],
)
def test_numbering_formats(num_id: str, ilvl: int, is_list: bool, ordered: bool) -> None:
    numbering = Numbering(etree.fromstring(f"<w:numbering {NS}>{NUMBERING}</w:numbering>"))
    assert numbering.is_list(num_id, ilvl) is is_list
    if is_list:
        assert numbering.ordered(num_id, ilvl) is ordered


def _numpr(num: str, lvl: int) -> str:
    return f'<w:numPr><w:ilvl w:val="{lvl}"/><w:numId w:val="{num}"/></w:numPr>'


def test_lists_grouped_per_consecutive_run() -> None:
    body = (
        p("a", ppr=_numpr("1", 0))
        + p("b", ppr=_numpr("1", 1))
        + p("between")
        + p("c", ppr=_numpr("2", 0))
    )
    doc = read(body, numbering=NUMBERING)
    lists = [e.content for e in doc.pages[0].elements if e.category is Category.LIST]
    assert lists == [
        {"ordered": False, "items": [{"text": "a", "level": 0}, {"text": "b", "level": 1}]},
        {"ordered": True, "items": [{"text": "c", "level": 0}]},
    ]


def test_paragraphs_set_right_to_left_say_so() -> None:
    """`w:bidi` sets a paragraph right to left whatever its words (a Hebrew document's line
    of figures or of an English name); without it (or turned off) the words decide."""
    bidi, off = "<w:bidi/>", '<w:bidi w:val="0"/>'
    body = (
        p("Version 2.0", ppr=bidi)
        + p("Release notes", style="Heading1", ppr=bidi)
        + p("Python", ppr=_numpr("1", 0) + bidi)
        + p("Plain English")
        + p("Turned off", ppr=off)
        + p("שלום עולם")
    )
    doc = read(body, styles=style("Heading1", "heading 1"), numbering=NUMBERING)
    directions = []
    for e in (e for page in doc.pages for e in page.elements):
        for c in e.content.get("items", [e.content]):
            directions.append((c["text"], c.get("direction")))
    assert directions == [
        ("Version 2.0", "rtl"),
        ("Release notes", "rtl"),
        ("Python", "rtl"),
        ("Plain English", None),
        ("Turned off", None),
        ("שלום עולם", "rtl"),
    ]


def test_lists_inherit_numbering_from_style() -> None:
    styles = style("LB", "List Bullet", f"<w:pPr>{_numpr('1', 0)}</w:pPr>")
    doc = read(p("x", "LB") + p("y", "LB"), styles=styles, numbering=NUMBERING)
    assert [e.category for e in doc.pages[0].elements] == [Category.LIST]


# --- page planning ----------------


def _blocks(spec: str) -> list[Block]:
    """'1' a heading level 1, 'T' a Title, '.' text, '|' text ending a section."""
    out: list[Block] = []
    section = 0
    el = etree.Element("p")
    for ch in spec:
        level = TITLE_LEVEL if ch == "T" else int(ch) if ch.isdigit() else None
        out.append(
            Block(
                el,
                section=section,
                ends_section=ch == "|",
                level=level,
                text=f"h{len(out)}" if level is not None else "",
                size=1,
            )
        )
        if ch == "|":
            section += 1
    return out


@pytest.mark.parametrize(
    ("spec", "sizes"),
    [
        ("", [0]),
        ("...", [3]),
        ("1..1.", [3, 2]),
        (".1.1", [1, 2, 1]),
        ("2.3.2.", [4, 2]),
        ("T.1.1.", [2, 2, 2]),
        ("T..", [3]),
        (".|..|.", [2, 3, 1]),
        ("1.|1.", [3, 2]),
        ("1.|.", [3, 1]),
    ],
    ids=[
        "empty",
        "no-headings",
        "h1s",
        "before-first",
        "top-is-h2",
        "title-not-top",
        "title-only",
        "sections",
        "heading-after-break",
        "section-tail",
    ],
)
def test_plan_page_boundaries(spec: str, sizes: list[int]) -> None:
    assert [len(plan.blocks) for plan in plan_pages(_blocks(spec))] == sizes


def test_plan_continuation_by_block_count() -> None:
    plans = plan_pages(_blocks("1" + "." * (2 * MAX_BLOCKS + 5)))
    assert [len(x.blocks) for x in plans] == [MAX_BLOCKS, MAX_BLOCKS, 6]
    assert [x.title for x in plans] == ["h0", "h0 (cont. 2)", "h0 (cont. 3)"]
    assert {x.first_page for x in plans} == {0}


def test_plan_continuation_by_characters() -> None:
    blocks = _blocks("....")
    for b in blocks:
        b.size = MAX_CHARS // 2
    assert [len(x.blocks) for x in plan_pages(blocks)] == [2, 2]


def test_plan_fallback_title_is_section_number() -> None:
    assert [x.title for x in plan_pages(_blocks("..|..|1."))] == ["Section 1", "Section 2", "h6"]


def test_plan_empty_heading_does_not_start_page() -> None:
    body = p("intro") + p("", "berschrift1") + p("more") + p("Real", "berschrift1")
    doc = read(body, styles=HEADINGS)
    assert [pg.title for pg in doc.pages] == ["Section 1", "Real"]


def test_plan_outline_level_on_paragraph_is_a_heading() -> None:
    doc = read(p("a") + p("Outlined", ppr='<w:outlineLvl w:val="0"/>') + p("b"))
    assert [pg.title for pg in doc.pages] == ["Section 1", "Outlined"]


def test_plan_body_inside_content_controls() -> None:
    body = (
        '<w:sdt><w:sdtPr><w:docPartObj><w:docPartGallery w:val="Cover Pages"/></w:docPartObj>'
        f"</w:sdtPr><w:sdtContent><w:sdt><w:sdtContent>{p('One', 'berschrift1')}{p('inner')}"
        f"</w:sdtContent></w:sdt></w:sdtContent></w:sdt>{p('Two', 'berschrift1')}"
    )
    doc = read(body, styles=HEADINGS)
    assert [pg.title for pg in doc.pages] == ["One", "Two"]
    assert any(e.content.get("text") == "inner" for e in doc.pages[0].elements)


# --- tables ----------------


def tc(text: str, props: str = "") -> str:
    return f"<w:tc>{f'<w:tcPr>{props}</w:tcPr>' if props else ''}{p(text)}</w:tc>"


def test_table_grid_before_after_and_short_rows() -> None:
    body = (
        "<w:tbl><w:tblGrid><w:gridCol/><w:gridCol/><w:gridCol/></w:tblGrid>"
        f"<w:tr>{tc('a')}{tc('b')}{tc('c')}</w:tr>"
        f'<w:tr><w:trPr><w:gridBefore w:val="1"/></w:trPr>{tc("x")}</w:tr>'
        f"<w:tr>{tc('y')}</w:tr></w:tbl>"
    )
    table = read(body).pages[0].elements[0]
    assert table.content["rows"] == [["", "x", ""], ["y", "", ""]]


def test_table_vertical_merge_ends_at_restart_free_cell() -> None:
    vm_restart = '<w:vMerge w:val="restart"/>'
    body = (
        "<w:tbl>"
        f"<w:tr>{tc('h1')}{tc('h2')}</w:tr>"
        f"<w:tr>{tc('top', vm_restart)}{tc('r1')}</w:tr>"
        f"<w:tr>{tc('', '<w:vMerge/>')}{tc('r2')}</w:tr>"
        f"<w:tr>{tc('free')}{tc('r3')}</w:tr>"
        f"<w:tr>{tc('', '<w:vMerge/>')}{tc('r4')}</w:tr>"
        "</w:tbl>"
    )
    table = read(body).pages[0].elements[0]
    assert [r[0] for r in table.content["rows"]] == ["top", "", "free", ""]
    assert table.metadata["merged_cells"] == ["A2:A3"]


def test_table_large_split_into_row_blocks() -> None:
    rows = "".join(f"<w:tr>{tc(f'r{i}')}</w:tr>" for i in range(TABLE_BLOCK_ROWS + 11))
    elements = read(f"<w:tbl>{rows}</w:tbl>").pages[0].elements
    assert [len(e.content["rows"]) for e in elements] == [TABLE_BLOCK_ROWS, 10]
    assert all(e.content["headers"] == ["r0"] for e in elements)
    assert [e.metadata["row_block"] for e in elements] == [
        {"index": 0, "of": 2, "first_row": 2, "last_row": TABLE_BLOCK_ROWS + 1},
        {"index": 1, "of": 2, "first_row": TABLE_BLOCK_ROWS + 2, "last_row": TABLE_BLOCK_ROWS + 11},
    ]
    assert [e.content["total_rows"] for e in elements] == [TABLE_BLOCK_ROWS, 10]
    assert elements[1].content["rows"][-1] == [f"r{TABLE_BLOCK_ROWS + 10}"]


@pytest.mark.parametrize(("index", "letters"), [(0, "A"), (25, "Z"), (26, "AA"), (701, "ZZ")])
def test_column_letters(index: int, letters: str) -> None:
    assert col_letters(index) == letters


# --- runs and fields ----------------


def _texts(doc: Document) -> list[str]:
    return [
        str(e.content.get("text"))
        for pg in doc.pages
        for e in pg.elements
        if e.category is Category.TEXT
    ]


def test_field_codes_hidden_results_shown() -> None:
    body = (
        '<w:p><w:r><w:t xml:space="preserve">Page </w:t></w:r>'
        '<w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText> PAGE </w:instrText>'
        '</w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t>7</w:t></w:r>'
        '<w:r><w:fldChar w:fldCharType="end"/></w:r></w:p>'
    )
    assert _texts(read(body)) == ["Page 7"]


def test_field_never_ended_does_not_swallow_later_text() -> None:
    body = (
        '<w:p><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText> BROKEN '
        "</w:instrText></w:r></w:p>" + p("still here")
    )
    assert _texts(read(body)) == ["still here"]


def test_hyperlink_field_with_bookmark_switch() -> None:
    body = (
        '<w:p><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText xml:space="preserve">'
        ' HYPERLINK \\l "target" </w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/>'
        '</w:r><w:r><w:t>go</w:t></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r></w:p>'
    )
    links = [e.content for e in read(body).pages[0].elements if e.category is Category.LINK]
    assert links == [{"text": "go", "url": "#target"}]


def test_two_empty_comment_ranges_closed_independently() -> None:
    body = (
        '<w:p><w:commentRangeStart w:id="1"/><w:commentRangeStart w:id="2"/>'
        '<w:commentRangeEnd w:id="2"/><w:r><w:t>only one</w:t></w:r><w:commentRangeEnd w:id="1"/>'
        '<w:r><w:commentReference w:id="1"/></w:r><w:r><w:commentReference w:id="2"/></w:r></w:p>'
    )
    anchors = {
        e.metadata["comment_id"]: e.content.get("anchor")
        for e in read(body).pages[0].elements
        if e.category is Category.ANNOTATION
    }
    assert anchors == {"1": "only one", "2": None}


def test_deleted_runs_and_moves_left_out() -> None:
    body = (
        '<w:p><w:r><w:t xml:space="preserve">keep </w:t></w:r><w:moveFrom w:author="x"><w:r>'
        '<w:t>moved-away</w:t></w:r></w:moveFrom><w:moveTo w:author="x"><w:r><w:t>moved-here'
        "</w:t></w:r></w:moveTo></w:p>"
    )
    assert _texts(read(body)) == ["keep moved-here"]


# --- limits, probe, Strict, HTML ----------------


def test_limits_max_pages_truncates_document() -> None:
    body = "".join(p(f"H{i}", "berschrift1") for i in range(5))
    doc = read(body, styles=HEADINGS, limits=Limits(max_pages=2))
    assert [pg.title for pg in doc.pages] == ["H0", "H1"]
    assert doc.metadata["truncated"] is True


def test_limits_max_elements_truncates_page() -> None:
    doc = read("".join(p(f"t{i}") for i in range(10)), limits=Limits(max_elements_per_page=4))
    assert len(doc.pages[0].elements) == 4
    assert doc.pages[0].metadata["truncated"] is True


def test_probe_reads_no_elements_but_counts_pages() -> None:
    data = docx(p("a") + p("B", "berschrift1") + p("C", "berschrift1"), styles=HEADINGS)
    props = probe(io.BytesIO(data), DEFAULT_LIMITS)
    assert (props.page_count, props.page_titles) == (3, ("Section 1", "B", "C"))


def test_strict_namespaces_mapped_to_transitional() -> None:
    data = b'<w:p xmlns:w="http://purl.oclc.org/ooxml/wordprocessingml/main"/>'
    assert etree.fromstring(from_strict(data)).tag == f"{{{W_NS}}}p"


def test_strict_mapping_leaves_transitional_alone() -> None:
    data = f"<w:p {NS}/>".encode()
    assert from_strict(data) is data


def test_html_chunk_blocks() -> None:
    html = (
        b"<html><head><style>x{}</style></head><body><h3>Head</h3><div>loose <i>text</i>"
        b"<p>para\n   wrapped</p></div><ul><li>item</li></ul><script>bad()</script>"
        b"<table><tr><td>a</td><td>b</td></tr></table></body></html>"
    )
    assert html_blocks(html) == [
        ("heading", (3, "Head")),
        ("text", "loose text"),
        ("text", "para wrapped"),
        ("text", "item"),
        ("table", [["a", "b"]]),
    ]


def test_table_absurd_spans_are_capped() -> None:
    span = '<w:gridSpan w:val="100000000"/>'
    body = (
        f"<w:tbl><w:tr>{tc('wide', span)}</w:tr>"
        f'<w:tr><w:trPr><w:gridBefore w:val="99999999"/></w:trPr>{tc("x")}</w:tr></w:tbl>'
    )
    table = read(body).pages[0].elements[0]
    assert table.content["total_columns"] <= 2 * 64


@pytest.mark.parametrize(
    "body",
    [
        p("a") + p("B", "berschrift1") + p("C", "berschrift1"),
        "<w:sdt><w:sdtContent><w:customXml>" + p("In", "berschrift1") + "</w:customXml>"
        "</w:sdtContent></w:sdt>" + p("x", ppr="<w:sectPr/>") + p("y"),
        "<w:tbl><w:tr><w:tc>"
        + p("Not a page", "berschrift1")
        + "</w:tc></w:tr></w:tbl>"
        + p("Z", "berschrift2")
        + p("t"),
    ],
    ids=["headings", "wrapped-and-sections", "table-heading-ignored"],
)
def test_probe_streamed_plan_equals_parsed_plan(monkeypatch: pytest.MonkeyPatch, body: str) -> None:
    data = docx(body, styles=HEADINGS)
    parsed = probe(io.BytesIO(data), DEFAULT_LIMITS)
    monkeypatch.setattr("dpe_server.extractors.docx.extract.STREAM_ABOVE", 0)
    streamed = probe(io.BytesIO(data), DEFAULT_LIMITS)
    assert streamed == parsed
    assert streamed.page_titles == tuple(pg.title for pg in read(body, styles=HEADINGS).pages)
