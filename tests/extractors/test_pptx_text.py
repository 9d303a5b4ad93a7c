"""Slide text bodies: bullet and font inheritance, grouping into blocks, placeholders,
reading order, link targets. XML inputs built in code from short strings."""

from __future__ import annotations

import pytest
from lxml import etree

from dpe_server.extractors.kit.fonts import is_monospace
from dpe_server.extractors.pptx.context import Layout, Master, placeholder
from dpe_server.extractors.pptx.shapes import ROW_TOLERANCE, reading_order
from dpe_server.extractors.pptx.text import Chain, blocks, cell_links, read_paragraphs

NS = (
    'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
    'xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" '
    'xmlns:a14="http://schemas.microsoft.com/office/drawing/2010/main" '
    'xmlns:m="http://schemas.openxmlformats.org/officeDocument/2006/math" '
    'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"'
)


def _body(paragraphs: str, lst: str = "") -> etree._Element:
    return etree.fromstring(
        f"<p:txBody {NS}><a:bodyPr/><a:lstStyle>{lst}</a:lstStyle>{paragraphs}</p:txBody>"
    )


def _style(inner: str) -> etree._Element:
    return etree.fromstring(f"<p:bodyStyle {NS}>{inner}</p:bodyStyle>")


def _p(text: str, ppr: str = "", rpr: str = "") -> str:
    return f"<a:p>{ppr}<a:r>{rpr}<a:t>{text}</a:t></a:r></a:p>"


BULLETED = _style(
    '<a:lvl1pPr><a:buChar char="•"/></a:lvl1pPr><a:lvl2pPr><a:buAutoNum type="arabicPeriod"/>'
    "</a:lvl2pPr>"
)


@pytest.mark.parametrize(
    ("ppr", "chain", "expected"),
    [
        ("", Chain(()), "none"),
        ("", Chain((BULLETED,)), "char"),
        ('<a:pPr lvl="1"/>', Chain((BULLETED,)), "num"),
        ("<a:pPr><a:buNone/></a:pPr>", Chain((BULLETED,)), "none"),
        ('<a:pPr><a:buAutoNum type="alphaLcParenR"/></a:pPr>', Chain(()), "num"),
        ('<a:pPr lvl="4"/>', Chain((BULLETED,)), "none"),
    ],
    ids=["nothing", "inherited-char", "inherited-num-level2", "own-none-wins", "own-num", "lvl5"],
)
def test_read_paragraphs_bullet(ppr: str, chain: Chain, expected: str) -> None:
    (para,) = read_paragraphs(_body(_p("x", ppr)), chain)
    assert para.bullet == expected


def test_read_paragraphs_shape_list_style_comes_first() -> None:
    own = "<a:lvl1pPr><a:buNone/></a:lvl1pPr>"
    (para,) = read_paragraphs(_body(_p("x"), own), Chain((BULLETED,)))
    assert para.bullet == "none"


def test_read_paragraphs_level_and_breaks() -> None:
    body = _body('<a:p><a:pPr lvl="2"/><a:r><a:t>a</a:t></a:r><a:br/><a:r><a:t>b</a:t></a:r></a:p>')
    (para,) = read_paragraphs(body, Chain(()))
    assert (para.text, para.level) == ("a\nb", 2)


def test_read_paragraphs_drop_empty() -> None:
    body = _body("<a:p/><a:p><a:r><a:t>  </a:t></a:r></a:p>" + _p("kept"))
    assert [p.text for p in read_paragraphs(body, Chain(()))] == ["kept"]


@pytest.mark.parametrize(
    ("face", "mono"),
    [("Consolas", True), ("courier new", True), ("Menlo", True), ("Calibri", False), (None, False)],
)
def test_is_monospace(face: str | None, mono: bool) -> None:
    assert is_monospace(face) is mono


def test_read_paragraphs_monospace_from_inherited_default_font() -> None:
    style = _style(
        '<a:lvl1pPr><a:defRPr><a:latin typeface="Source Code Pro"/></a:defRPr></a:lvl1pPr>'
    )
    (para,) = read_paragraphs(_body(_p("x = 1")), Chain((style,)))
    assert para.mono is True


def test_read_paragraphs_mixed_fonts_are_not_code() -> None:
    body = _body(
        '<a:p><a:r><a:rPr><a:latin typeface="Consolas"/></a:rPr><a:t>call</a:t></a:r>'
        "<a:r><a:t> the function</a:t></a:r></a:p>"
    )
    (para,) = read_paragraphs(body, Chain(()))
    assert para.mono is False


def test_read_paragraphs_equation_becomes_its_own_paragraph() -> None:
    body = _body(
        "<a:p><a:r><a:t>Area:</a:t></a:r><a14:m><m:oMathPara><m:oMath><m:r><m:t>A=πr</m:t></m:r>"
        "</m:oMath></m:oMathPara></a14:m></a:p>"
    )
    paras = read_paragraphs(body, Chain(()))
    assert [(p.text, p.formula) for p in paras] == [("Area:", None), ("", "A=πr")]


def test_blocks_group_consecutive_kinds() -> None:
    body = _body(
        _p("intro")
        + _p("one", "<a:pPr><a:buChar char='-'/></a:pPr>")
        + _p("two", "<a:pPr lvl='1'><a:buChar char='-'/></a:pPr>")
        + _p("print()", rpr='<a:rPr><a:latin typeface="Courier"/></a:rPr>')
        + _p("outro")
    )
    kinds = [(b.kind, len(b.paragraphs)) for b in blocks(read_paragraphs(body, Chain(())))]
    assert kinds == [("text", 1), ("list", 2), ("code", 1), ("text", 1)]


def test_block_ordered_follows_top_level_items() -> None:
    body = _body(
        _p("a", "<a:pPr><a:buAutoNum type='arabicPeriod'/></a:pPr>")
        + _p("a.1", "<a:pPr lvl='1'><a:buChar char='-'/></a:pPr>")
    )
    (block,) = blocks(read_paragraphs(body, Chain(())))
    assert block.ordered is True


MASTER = etree.fromstring(
    f"""<p:sldMaster {NS}><p:cSld><p:spTree>
<p:sp><p:nvSpPr><p:cNvPr id="2" name="T"/><p:cNvSpPr/><p:nvPr><p:ph type="title"/></p:nvPr>
</p:nvSpPr>
<p:spPr><a:xfrm><a:off x="10" y="20"/><a:ext cx="1" cy="1"/></a:xfrm></p:spPr></p:sp>
<p:sp><p:nvSpPr><p:cNvPr id="3" name="B"/><p:cNvSpPr/><p:nvPr><p:ph type="body" idx="1"/></p:nvPr>
</p:nvSpPr><p:spPr><a:xfrm><a:off x="10" y="500"/><a:ext cx="1" cy="1"/></a:xfrm></p:spPr></p:sp>
</p:spTree></p:cSld><p:txStyles><p:titleStyle><a:lvl1pPr><a:buNone/></a:lvl1pPr></p:titleStyle>
<p:bodyStyle><a:lvl1pPr><a:buChar char="•"/></a:lvl1pPr></p:bodyStyle><p:otherStyle/></p:txStyles>
</p:sldMaster>"""
)
LAYOUT = etree.fromstring(
    f"""<p:sldLayout {NS}><p:cSld name="Two Content"><p:spTree>
<p:sp><p:nvSpPr><p:cNvPr id="3" name="Left"/><p:cNvSpPr/><p:nvPr><p:ph sz="half" idx="1"/></p:nvPr>
</p:nvSpPr><p:spPr/><p:txBody><a:bodyPr/><a:lstStyle/><a:p/></p:txBody></p:sp>
<p:sp><p:nvSpPr><p:cNvPr id="4" name="Sub"/><p:cNvSpPr/><p:nvPr><p:ph type="subTitle" idx="2"/>
</p:nvPr></p:nvSpPr><p:spPr/><p:txBody><a:bodyPr/><a:lstStyle><a:lvl1pPr><a:buNone/></a:lvl1pPr>
</a:lstStyle><a:p/></p:txBody></p:sp></p:spTree></p:cSld></p:sldLayout>"""
)


def _ph(attrs: str) -> etree._Element:
    sp = etree.fromstring(
        f"<p:sp {NS}><p:nvSpPr><p:cNvPr id='9' name='x'/><p:cNvSpPr/><p:nvPr><p:ph {attrs}/>"
        "</p:nvPr></p:nvSpPr><p:spPr/></p:sp>"
    )
    found = placeholder(sp)
    assert found is not None
    return found


@pytest.mark.parametrize(
    ("attrs", "kind", "pos", "bullet"),
    [
        ('idx="1"', "obj", (500, 10), "char"),
        ('type="subTitle" idx="2"', "subTitle", (500, 10), "none"),
        ('type="title"', "title", (20, 10), "none"),
    ],
    ids=["content-from-master-body", "subtitle-layout-buNone", "title"],
)
def test_layout_inherit(attrs: str, kind: str, pos: tuple[int, int], bullet: str) -> None:
    layout = Layout.parse(LAYOUT, Master.parse(MASTER))
    got_kind, got_pos, chain = layout.inherit(_ph(attrs))
    assert (got_kind, got_pos, chain.bullet(0)) == (kind, pos, bullet)
    assert layout.name == "Two Content"


def _linked(text: str, rid: str) -> str:
    return f'<a:r><a:rPr><a:hlinkClick r:id="{rid}"/></a:rPr><a:t>{text}</a:t></a:r>'


def test_cell_links_join_adjacent_runs_of_one_link() -> None:
    body = _body(
        f"<a:p>{_linked('[', 'rId1')}{_linked('1]', 'rId1')}<a:r><a:t> and </a:t></a:r>"
        f"{_linked('more', 'rId1')}{_linked('!', 'rId2')}</a:p>"
    )
    links = [(x.text, x.rid, x.follows) for x in cell_links(body)]
    assert links == [("[1]", "rId1", False), ("more", "rId1", False), ("!", "rId2", True)]


INCH = 914_400


@pytest.mark.parametrize(
    ("positions", "expected"),
    [
        ([((2 * INCH, 0), 0), ((INCH, 0), 1)], [1, 0]),
        ([((INCH, 5 * INCH), 0), ((INCH, 0), 1)], [1, 0]),
        ([((int(1.5 * INCH), 5 * INCH), 0), ((int(1.6 * INCH), INCH), 1)], [1, 0]),
        ([((INCH, 0), 0), ((INCH + ROW_TOLERANCE + 1, 0), 1), ((INCH, 9), 2)], [0, 2, 1]),
        ([((0, 0), 0), ((0, 0), 1)], [0, 1]),
    ],
    ids=["top-first", "left-first", "near-level-columns", "next-row", "ties-stable"],
)
def test_reading_order(positions: list[tuple[tuple[int, int], int]], expected: list[int]) -> None:
    assert reading_order(positions) == expected
