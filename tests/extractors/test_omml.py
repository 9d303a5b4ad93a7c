"""OMML → linear text: each construct, and equation paragraphs."""

from __future__ import annotations

import sys
from types import FrameType

import pytest
from lxml import etree

from dpe_server.extractors.kit.package import NS
from dpe_server.extractors.ooxml.omml import omml_to_linear

M = f'xmlns:m="{NS["m"]}" xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'


def math(body: str, tag: str = "m:oMath") -> etree._Element:
    return etree.fromstring(f"<{tag} {M}>{body}</{tag}>")


def r(text: str) -> str:
    return f"<m:r><m:t>{text}</m:t></m:r>"


def e(body: str, tag: str = "e") -> str:
    return f"<m:{tag}>{body}</m:{tag}>"


OMML_CASES = [
    pytest.param(r("x") + r("+1"), "x+1", id="runs"),
    pytest.param(f"<m:f>{e(r('a'), 'num')}{e(r('b'), 'den')}</m:f>", "a/b", id="fraction"),
    pytest.param(
        f"<m:f>{e(r('a+b'), 'num')}{e(r('2'), 'den')}</m:f>", "(a+b)/2", id="fraction-compound"
    ),
    pytest.param(f"<m:sSup>{e(r('x'))}{e(r('2'), 'sup')}</m:sSup>", "x^2", id="sup"),
    pytest.param(f"<m:sSup>{e(r('e'))}{e(r('-x'), 'sup')}</m:sSup>", "e^(-x)", id="sup-compound"),
    pytest.param(f"<m:sSub>{e(r('x'))}{e(r('i'), 'sub')}</m:sSub>", "x_i", id="sub"),
    pytest.param(
        f"<m:sSubSup>{e(r('x'))}{e(r('i'), 'sub')}{e(r('2'), 'sup')}</m:sSubSup>",
        "x_i^2",
        id="subsup",
    ),
    pytest.param(
        f"<m:rad><m:radPr><m:degHide m:val='1'/></m:radPr><m:deg/>{e(r('x'))}</m:rad>",
        "√(x)",
        id="sqrt",
    ),
    pytest.param(f"<m:rad>{e(r('3'), 'deg')}{e(r('x'))}</m:rad>", "∛(x)", id="cube-root"),
    pytest.param(f"<m:rad>{e(r('n'), 'deg')}{e(r('x'))}</m:rad>", "√(n&x)", id="nth-root"),
    pytest.param(
        "<m:nary><m:naryPr><m:chr m:val='∑'/></m:naryPr>"
        f"{e(r('i=1'), 'sub')}{e(r('n'), 'sup')}{e(r('i'))}</m:nary>",
        "∑_(i=1)^n i",
        id="nary-sum",
    ),
    pytest.param(
        f"<m:nary>{e(r('0'), 'sub')}{e(r('1'), 'sup')}{e(r('x dx'))}</m:nary>",
        "∫_0^1 x dx",
        id="nary-default-integral",
    ),
    pytest.param(f"<m:d>{e(r('a+b'))}</m:d>", "(a+b)", id="delimiter"),
    pytest.param(
        "<m:d><m:dPr><m:begChr m:val='['/><m:endChr m:val=']'/><m:sepChr m:val=','/></m:dPr>"
        f"{e(r('a'))}{e(r('b'))}</m:d>",
        "[a, b]",
        id="delimiter-chars",
    ),
    pytest.param(
        f"<m:m><m:mr>{e(r('a'))}{e(r('b'))}</m:mr><m:mr>{e(r('c'))}{e(r('d'))}</m:mr></m:m>",
        "[a, b; c, d]",
        id="matrix",
    ),
    pytest.param(
        f"<m:d><m:e><m:m><m:mr>{e(r('1'))}{e(r('0'))}</m:mr><m:mr>{e(r('0'))}{e(r('1'))}"
        "</m:mr></m:m></m:e></m:d>",
        "(1, 0; 0, 1)",
        id="matrix-in-parens",
    ),
    pytest.param(f"<m:func>{e(r('sin'), 'fName')}{e(r('x'))}</m:func>", "sin x", id="function"),
    pytest.param(
        f"<m:func>{e(r('cos'), 'fName')}{e(r('2x+1'))}</m:func>",
        "cos(2x+1)",
        id="function-compound",
    ),
    pytest.param(
        r("a") + f"<m:func>{e(r('cos'), 'fName')}{e(r('x'))}</m:func>",
        "a cos x",
        id="function-spaced",
    ),
    pytest.param(
        f"<m:func><m:fName><m:limLow>{e(r('lim'))}{e(r('n→∞'), 'lim')}</m:limLow></m:fName>"
        f"{e(r('a_n'))}</m:func>",
        "lim_(n→∞) a_n",
        id="limit",
    ),
    pytest.param(f"<m:acc>{e(r('x'))}</m:acc>", "x\u0302", id="accent-default-hat"),
    pytest.param(
        f"<m:bar><m:barPr><m:pos m:val='top'/></m:barPr>{e(r('x'))}</m:bar>",
        "x\u0305",
        id="overbar",
    ),
    pytest.param(f"<m:eqArr>{e(r('x=1'))}{e(r('y=2'))}</m:eqArr>", "x=1; y=2", id="equation-array"),
    pytest.param(
        "<m:d><m:e><m:f><m:fPr><m:type m:val='noBar'/></m:fPr>"
        f"{e(r('n'), 'num')}{e(r('k'), 'den')}</m:f></m:e></m:d>",
        "(n¦k)",
        id="binomial",
    ),
    pytest.param(f"<m:box>{e(r('y'))}</m:box>", "y", id="unknown-recursed"),
    pytest.param(
        f"<m:sSup><m:e><m:d><m:dPr><m:begChr m:val='|'/><m:endChr m:val='|'/></m:dPr>"
        f"{e(r('x'))}</m:d></m:e>{e(r('2'), 'sup')}</m:sSup>",
        "|x|^2",
        id="abs-base",
    ),
    pytest.param(
        f"<m:f>{e(r('|a|+|b|'), 'num')}{e(r('2'), 'den')}</m:f>", "(|a|+|b|)/2", id="abs-sum"
    ),
    pytest.param(
        r("a") + f"<w:del>{r('b')}</w:del><w:ins>{r('c')}</w:ins>", "ac", id="tracked-changes"
    ),
    pytest.param(
        f"<m:f>{e(r('1'), 'num')}{e(r('z'), 'den')}</m:f>" + r("dz"), "1/z dz", id="fraction-spaced"
    ),
]


@pytest.mark.parametrize(("body", "expected"), OMML_CASES)
def test_omml_to_linear(body: str, expected: str) -> None:
    assert omml_to_linear(math(body)) == expected


def test_omml_to_linear_paragraph_joins_equations() -> None:
    para = math(f"<m:oMath>{r('a=1')}</m:oMath><m:oMath>{r('b=2')}</m:oMath>", "m:oMathPara")
    assert omml_to_linear(para) == "a=1\nb=2"


def test_omml_to_linear_deepest_parsable_nesting() -> None:
    depth = 120  # m:d/m:e pairs: 240 levels, near the parser's limit of 256
    body = "<m:d><m:e>" * depth + r("x") + "</m:e></m:d>" * depth
    assert omml_to_linear(math(body)) == "(" * depth + "x" + ")" * depth


def test_omml_to_linear_out_of_stack_falls_back_to_run_text() -> None:
    body = "<m:d><m:e>" * 120 + r("x") + "</m:e></m:d>" * 120
    limit = sys.getrecursionlimit()
    frame: FrameType | None = sys._getframe()
    depth = 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    sys.setrecursionlimit(depth + 60)  # room to start rendering, not to finish
    try:
        text = omml_to_linear(math(body))
    finally:
        sys.setrecursionlimit(limit)
    assert text == "x"
