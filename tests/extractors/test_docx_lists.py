"""docx lists (issue 16): grouping by numId, ordered from numFmt, the number label Word shows.

Units on the number formats, the numbering part and the counters; small packages for the
grouping; the doc-lists.docx fixture (written as an office suite writes lists) on the tree
and in Markdown; the corpus documents with lists (no item lost, labels as the text says).
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from lxml import etree

from dpe_server.extractors import DEFAULT_LIMITS
from dpe_server.extractors.docx.extract import extract, extract_pages
from dpe_server.extractors.docx.numbering import Counters, Numbering
from dpe_server.extractors.kit.numformat import cjk_counting, letters, number, roman
from dpe_server.model.tree import Category, Document
from dpe_server.views.render import render_element
from fixtures.builders.docx_lists import LISTS
from tests.corpus_trees import Outcome
from tests.extractors.test_docx_units import HEADINGS, NS, _numpr, docx, p, read

# --- number formats ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "want"), [(1, "i"), (4, "iv"), (9, "ix"), (14, "xiv"), (1994, "mcmxciv"), (0, "0")]
)
def test_roman(n: int, want: str) -> None:
    assert roman(n) == want


@pytest.mark.parametrize(("n", "want"), [(1, "a"), (26, "z"), (27, "aa"), (28, "bb"), (53, "aaa")])
def test_letters_repeat_like_word(n: int, want: str) -> None:
    assert letters(n) == want


CJK = [(1, "一"), (10, "十"), (11, "十一"), (20, "二十"), (105, "一百零五"), (110, "一百一十")]
CJK += [(1005, "一千零五"), (2024, "二千零二十四")]


@pytest.mark.parametrize(("n", "want"), CJK)
def test_cjk_counting(n: int, want: str) -> None:
    assert cjk_counting(n) == want


@pytest.mark.parametrize(
    ("fmt", "n", "want"),
    [
        ("decimal", 12, "12"),
        ("upperRoman", 4, "IV"),
        ("upperLetter", 3, "C"),
        ("decimalZero", 7, "07"),
        ("ordinal", 22, "22nd"),
        ("decimalFullWidth", 12, "１２"),
        ("decimalEnclosedCircle", 3, "③"),
        ("ideographTraditional", 2, "乙"),
        ("japaneseCounting", 3, "三"),
        ("someFutureFormat", 5, "5"),
    ],
)
def test_number_formats(fmt: str, n: int, want: str) -> None:
    assert number(n, fmt) == want


# --- the numbering part and its counters -----------------------------------------------------


def _lvl(ilvl: int, fmt: str, text: str, start: int = 1, extra: str = "") -> str:
    return (
        f'<w:lvl w:ilvl="{ilvl}"><w:start w:val="{start}"/><w:numFmt w:val="{fmt}"/>'
        f'<w:lvlText w:val="{text}"/>{extra}</w:lvl>'
    )


NUMBERING = (
    f'<w:abstractNum w:abstractNumId="0">{_lvl(0, "bullet", "•")}</w:abstractNum>'
    f'<w:abstractNum w:abstractNumId="1">{_lvl(0, "decimal", "%1.")}'
    f"{_lvl(1, 'lowerLetter', '%2)')}{_lvl(2, 'lowerRoman', '%1.%2.%3', extra='<w:isLgl/>')}"
    "</w:abstractNum>"
    f'<w:abstractNum w:abstractNumId="2">{_lvl(0, "upperRoman", "%1.", start=4)}</w:abstractNum>'
    '<w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num>'
    '<w:num w:numId="2"><w:abstractNumId w:val="1"/></w:num>'
    '<w:num w:numId="3"><w:abstractNumId w:val="1"/></w:num>'
    '<w:num w:numId="4"><w:abstractNumId w:val="1"/><w:lvlOverride w:ilvl="0">'
    '<w:startOverride w:val="5"/></w:lvlOverride></w:num>'
    '<w:num w:numId="5"><w:abstractNumId w:val="2"/></w:num>'
)


def _numbering() -> Numbering:
    return Numbering(etree.fromstring(f"<w:numbering {NS}>{NUMBERING}</w:numbering>"))


def _labels(steps: list[tuple[str, int]]) -> list[str]:
    numbering = _numbering()
    counters = Counters(numbering)
    return [numbering.label(n, lvl, counters.advance(n, lvl)) for n, lvl in steps]


def test_labels_follow_lvl_text_and_reset_deeper_levels() -> None:
    steps = [("2", 0), ("2", 1), ("2", 1), ("2", 2), ("2", 0), ("2", 1)]
    assert _labels(steps) == ["1.", "a)", "b)", "1.2.1", "2.", "a)"]


def test_nums_of_one_abstract_continue_and_start_override_restarts() -> None:
    steps = [("2", 0), ("2", 0), ("3", 0), ("4", 0), ("4", 0), ("5", 0)]
    assert _labels(steps) == ["1.", "2.", "3.", "5.", "6.", "IV."]


@pytest.mark.parametrize(
    ("num_id", "ordered"), [("1", False), ("2", True), ("5", True), ("9", False)]
)
def test_ordered_comes_from_num_fmt(num_id: str, ordered: bool) -> None:
    assert _numbering().ordered(num_id, 0) is ordered


# --- grouping -------------------------------------------------------------------------------


def _lists(doc: Document) -> list[dict[str, Any]]:
    return [dict(e.content) for pg in doc.pages for e in pg.elements if e.category is Category.LIST]


def test_bullets_then_numbers_are_two_lists() -> None:
    body = "".join(p(t, ppr=_numpr("1", 0)) for t in "ab") + "".join(
        p(t, ppr=_numpr("2", 0)) for t in "cde"
    )
    lists = _lists(read(body, numbering=NUMBERING))
    assert [(x["ordered"], [i["text"] for i in x["items"]]) for x in lists] == [
        (False, ["a", "b"]),
        (True, ["c", "d", "e"]),
    ]
    assert [i.get("label") for i in lists[1]["items"]] == ["1.", "2.", "3."]


def test_a_deeper_list_with_its_own_num_id_stays_nested() -> None:
    body = (
        p("top", ppr=_numpr("2", 0)) + p("sub", ppr=_numpr("1", 1)) + p("next", ppr=_numpr("2", 0))
    )
    lists = _lists(read(body, numbering=NUMBERING))
    assert [[i["text"] for i in x["items"]] for x in lists] == [["top", "sub", "next"]]


def test_start_is_given_when_not_one() -> None:
    lists = _lists(read(p("x", ppr=_numpr("5", 0)), numbering=NUMBERING))
    assert lists == [
        {"ordered": True, "items": [{"text": "x", "level": 0, "label": "IV."}], "start": 4}
    ]


def test_counters_continue_across_pages_whichever_pages_are_read() -> None:
    """A numbered list split by a top-level heading (a new page) keeps counting per numId, as
    Word shows it; an empty numbered paragraph counts too; reading one page alone gives the
    same labels as reading them all."""
    body = (
        p("One", style="berschrift1")
        + p("a", ppr=_numpr("2", 0))
        + p("b", ppr=_numpr("2", 0))
        + f"<w:p><w:pPr>{_numpr('2', 0)}</w:pPr></w:p>"
        + p("Two", style="berschrift1")
        + p("d", ppr=_numpr("2", 0))
        + p("d1", ppr=_numpr("2", 1))
        + p("Three", style="berschrift1")
        + p("e", ppr=_numpr("2", 0))
    )
    data = docx(body, styles=HEADINGS, numbering=NUMBERING)
    whole = extract(io.BytesIO(data), DEFAULT_LIMITS)
    labels = [
        [[i.get("label") for i in x["items"]] for x in _lists(Document(whole.properties, (pg,)))]
        for pg in whole.pages
    ]
    assert labels == [[["1.", "2."]], [["4.", "a)"]], [["5."]]]
    assert [x.get("start") for x in _lists(whole)] == [None, 4, 5]
    for index in (2, 1):
        (alone,) = extract_pages(io.BytesIO(data), [index], DEFAULT_LIMITS)
        assert alone == whole.pages[index]


# --- the fixture ------------------------------------------------------------------------------


def _item(text: str, label: str | None = None, level: int = 0) -> dict[str, Any]:
    return {"text": text, "level": level} | ({"label": label} if label else {})


def _ordered(items: list[dict[str, Any]], start: int = 1) -> dict[str, Any]:
    return {"ordered": True, "items": items} | ({"start": start} if start != 1 else {})


FIXTURE_LISTS = [
    {"ordered": False, "items": [_item("SENT-LB-1"), _item("SENT-LB-2")]},
    _ordered([_item(f"SENT-LN-{i}", f"{i}.") for i in (1, 2, 3)]),
    _ordered([_item("SENT-START-3", "3."), _item("SENT-START-4", "4.")], start=3),
    _ordered([_item(f"SENT-LETTER-{c}", f"{c.lower()})") for c in "ABC"]),
    _ordered(
        [_item(f"SENT-ROMAN-{n}", f"{r}.") for n, r in enumerate(["i", "ii", "iii", "iv"], 1)]
    ),
    _ordered(
        [
            _item("SENT-NEST-1", "1."),
            _item("SENT-NEST-1-1", "1.1.", 1),
            _item("SENT-NEST-1-2", "1.2.", 1),
            _item("SENT-NEST-2", "2."),
            _item("SENT-NEST-2-1", "2.1.", 1),
        ]
    ),
    _ordered([_item("SENT-CONT-1", "1."), _item("SENT-CONT-2", "2.")]),
    _ordered([_item("SENT-CONT-3", "3.")], start=3),
    _ordered([_item("SENT-RESTART-1", "1."), _item("SENT-RESTART-2", "2.")]),
    _ordered([_item(f"SENT-CJK-{n}", f"{c}、") for n, c in enumerate("一二三", 1)]),
]


@pytest.fixture(scope="module")
def lists_doc(fixture_dir: Path) -> Document:
    with (fixture_dir / LISTS).open("rb") as f:
        return extract(f, DEFAULT_LIMITS)


def test_fixture_lists_as_word_shows_them(lists_doc: Document) -> None:
    assert _lists(lists_doc) == FIXTURE_LISTS


def _markdown(content: dict[str, Any]) -> str:
    el = {"element_id": "lst_1", "category": "list", "summary": "", "content": content}
    return render_element(el, markdown=True, full=True)


@pytest.mark.parametrize(
    ("index", "markdown"),
    [
        (0, "- SENT-LB-1\n- SENT-LB-2\n"),
        (1, "1. SENT-LN-1\n2. SENT-LN-2\n3. SENT-LN-3\n"),
        (2, "3. SENT-START-3\n4. SENT-START-4\n"),
        (3, "- a) SENT-LETTER-A\n- b) SENT-LETTER-B\n- c) SENT-LETTER-C\n"),
        (
            5,
            "1. SENT-NEST-1\n   - 1.1. SENT-NEST-1-1\n   - 1.2. SENT-NEST-1-2\n2. SENT-NEST-2\n"
            "   - 2.1. SENT-NEST-2-1\n",
        ),
        (9, "- 一、 SENT-CJK-1\n- 二、 SENT-CJK-2\n- 三、 SENT-CJK-3\n"),
    ],
)
def test_fixture_lists_in_markdown(index: int, markdown: str) -> None:
    """A decimal label is the Markdown marker (so `start` shows); another label follows `-`."""
    assert _markdown(FIXTURE_LISTS[index]) == markdown


# --- the corpus -----------------------------------------------------------------------------

CORPUS_ITEMS = {
    "docling__docx_rich_tables_01.docx": 2,
    "docling__equations.docx": 3,
    "docling__word_sample.docx": 9,
    "poi__ComplexNumberedLists.docx": 14,
    "poi__bug65649.docx": 79,
    "poi__delins.docx": 16,
    "tika__testWORD_2006ml.docx": 2,
    "tika__testWORD_various.docx": 6,
    "unstructured__handbook-872p.docx": 44,
}
"""List items per corpus document, measured before lists were split by numId (issue 16)."""


def _corpus_lists(outcomes: dict[Path, Outcome], corpus: Path, name: str) -> list[dict[str, Any]]:
    """The lists of a corpus document, from the session's one extraction of the corpus."""
    doc = outcomes[corpus / "docx" / name].doc
    assert doc is not None, outcomes[corpus / "docx" / name]
    return _lists(doc)


@pytest.mark.corpus
@pytest.mark.parametrize(("name", "count"), CORPUS_ITEMS.items(), ids=list(CORPUS_ITEMS))
def test_corpus_no_list_item_lost(
    corpus: Path, corpus_outcomes: dict[Path, Outcome], name: str, count: int
) -> None:
    lists = _corpus_lists(corpus_outcomes, corpus, name)
    assert sum(len(x["items"]) for x in lists) == count
    for x in lists:
        for item in x["items"]:
            assert ("label" in item) is x["ordered"] or item["level"] > 0, json.dumps(x)


@pytest.mark.corpus
def test_corpus_labels_match_what_the_text_says(
    corpus: Path, corpus_outcomes: dict[Path, Outcome]
) -> None:
    """POI's test document names each item's number in its text."""
    lists = _corpus_lists(corpus_outcomes, corpus, "poi__ComplexNumberedLists.docx")
    got = [(i["text"], i.get("label"), x.get("start")) for x in lists for i in x["items"]][-7:]
    assert got == [
        ("Restarted to 1 from 5", "1.", None),
        ("Restarted @ 2", "2.", None),
        ("Restarted @ 3", "3.", None),
        ("Jump to new list at 10", "10.", 10),
        ("Now 11", "11.", 10),
        ("Carrying on @ 12", "12.", 12),
        ("Carrying on @ 13", "13.", 12),
    ]
