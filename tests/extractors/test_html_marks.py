"""The web page walk's shortcuts say what the rules they stand for say: the marks found in one
pass over a tree (`visible.marks`) are exactly the elements `hidden`, `furniture` and Word's
list paragraph test pick, and `collapse`'s `str.split` path collapses white space exactly as
a browser does (`_SPACE`: spaces, tabs, line ends, no-break spaces; not the other Unicode
spaces)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from lxml import etree

from dpe_server.extractors import DEFAULT_LIMITS
from dpe_server.extractors.html import source, word
from dpe_server.extractors.html.visible import HIDDEN, WORD_LIST, furniture, hidden, marks, tag
from dpe_server.extractors.html.walk import collapse
from fixtures.builders import web

_BROWSER_SPACE = re.compile(r"[ \t\n\r\f\u00a0]+")
_AROUND_BREAK = re.compile(r" *\n *")

MARKED = b"""<html><body>
<nav><a href="/">Home</a></nav><header>Site</header>
<article><header>Own header</header><footer>Own footer</footer></article>
<div class="cookie-consent">We use cookies</div><div id="main" class="content">x</div>
<p hidden>a</p><p aria-hidden=" TRUE ">b</p><span style="display: none">c</span>
<span style="visibility:hidden">d</span><input type="hidden" value="e"><input type="text">
<div role="navigation">f</div><div role="contentinfo">g</div><section role="banner">h</section>
<p style="mso-list:l0 level1 lfo1"><span style="mso-list:Ignore">1.</span>item</p>
<p style="color: red">styled</p><footer>Site footer</footer>
</body></html>"""


def _expected(root: etree._Element) -> dict[etree._Element, str]:
    out: dict[etree._Element, str] = {}
    for el in root.iter():
        name = tag(el)
        if not name:
            continue
        if hidden(el):
            out[el] = HIDDEN
        elif (kind := furniture(el, name)) is not None:
            out[el] = kind
        elif name == "p" and word.is_list_paragraph(el):
            out[el] = WORD_LIST
    return out


def test_marks_are_what_the_rules_say_of_each_element() -> None:
    root = source.parse(MARKED.decode())
    found = marks(root, word.is_list_paragraph)
    assert found == _expected(root)
    kinds = sorted(found.values())
    assert kinds.count(HIDDEN) == 5
    assert WORD_LIST in kinds
    assert {"navigation", "banner", "site_footer", "cookie_banner"} <= set(kinds)


@pytest.mark.parametrize("name", list(web.FILES))
def test_marks_of_the_fixture_pages(fixture_dir: Path, name: str) -> None:
    with (fixture_dir / name).open("rb") as f:
        root = source.load(f, DEFAULT_LIMITS).root
    assert marks(root, word.is_list_paragraph) == _expected(root)


def _browser(text: str) -> str:
    text = _BROWSER_SPACE.sub(" ", text)
    if "\x0b" in text:
        text = _AROUND_BREAK.sub("\n", text.replace("\x0b", "\n"))
    return text.strip()


def test_collapse_treats_every_white_space_as_a_browser_does() -> None:
    spaces = [chr(c) for c in range(0x3001) if chr(c).isspace() or chr(c) == "\u200b"]
    for space in spaces:
        for text in (f"a{space}b", f"{space}a {space} b{space}", f"a{space}{space}b\tc"):
            assert collapse(text) == _browser(text), repr(text)
    assert collapse("a \x0b b") == "a\nb"
    assert collapse("a\u2003b") == "a\u2003b"  # an em space is shown, not collapsed
