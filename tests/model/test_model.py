"""The DPE model: ids, the builder, and lossless JSON round trips."""

from __future__ import annotations

import json

import pytest

from dpe_server.model.direction import is_rtl
from dpe_server.model.tree import (
    SUMMARY_MAX,
    Category,
    Document,
    PageBuilder,
    Properties,
    element_id,
    one_line,
    page_of_element_id,
    parse_element_id,
)


def test_nineteen_categories_with_distinct_abbreviations() -> None:
    assert len(Category) == 19
    assert len({c.abbr for c in Category}) == 19


@pytest.mark.parametrize("category", list(Category), ids=[c.value for c in Category])
def test_element_id_names_its_page(category: Category) -> None:
    eid = element_id(37, category, 12)
    parts = parse_element_id(eid)
    assert parts is not None
    assert (parts.page_index, parts.category, parts.n) == (37, category, 12)


@pytest.mark.parametrize(
    ("value", "page"),
    [
        ("p0-tbl1", 0),
        ("p12-h3", 12),
        ("tbl-001", None),
        ("p01-h1", None),
        ("p1-tbl0", None),
        ("p1-xyz1", None),
        ("p-1-h1", None),
        ("", None),
        ("p" + "9" * 18 + "-h1", 10**18 - 1),
        ("p" + "9" * 19 + "-h1", None),  # more digits than any page: names none
        ("p" + "9" * 5000 + "-h1", None),  # past Python's int() limit of 4,300 digits
        ("p0-h" + "9" * 5000, None),
    ],
)
def test_page_of_element_id(value: str, page: int | None) -> None:
    assert page_of_element_id(value) == page


def test_builder_numbers_per_category_from_one() -> None:
    b = PageBuilder(3)
    ids = [
        b.add(Category.TEXT, "a", {"text": "a"}),
        b.add(Category.TABLE, "t", {"headers": [], "rows": []}),
        b.add(Category.TEXT, "b", {"text": "b"}),
    ]
    assert ids == ["p3-txt1", "p3-tbl1", "p3-txt2"]
    assert b.next_id(Category.TEXT) == "p3-txt3"


def test_builder_flattens_summary_to_one_line() -> None:
    b = PageBuilder(0)
    b.add(Category.TEXT, "two\nlines  " + "x" * 300, {"text": ""})
    summary = b.build("t").elements[0].summary
    assert "\n" not in summary
    assert len(summary) == SUMMARY_MAX
    assert summary.endswith("…")


def test_one_line_keeps_short_text() -> None:
    assert one_line("  a \t b ") == "a b"


def test_document_json_round_trip_is_lossless() -> None:
    b = PageBuilder(0)
    b.add(
        Category.CHART,
        "c",
        {"chart_type": "bar", "series": [{"values": [1, 2.5, None]}]},
        {"source_range": "A1:B2"},
    )
    doc = Document(
        Properties(1, "T", ("k",), "s", ("Sheet1",), {"author": "me"}),
        (b.build("Sheet1", {"hidden": True}),),
        {"truncated": False},
    )
    again = Document.from_json(json.loads(json.dumps(doc.to_json())))
    assert again == doc


def test_builder_cap_drops_elements_and_says_truncated() -> None:
    b = PageBuilder(0, max_elements=2)
    ids = [b.add(Category.TEXT, str(i), {"text": str(i)}) for i in range(4)]
    assert ids == ["p0-txt1", "p0-txt2", "", ""]
    page = b.build("t", {"hidden": True})
    assert len(page.elements) == 2
    assert page.metadata == {"hidden": True, "truncated": True}


def test_builder_put_keeps_what_add_copies_and_collapses() -> None:
    content, meta = {"text": "a  b"}, {"source": "caption"}
    put, add = PageBuilder(0, max_elements=1), PageBuilder(0, max_elements=1)
    assert put.put(Category.TEXT, "a b", content, meta) == add.add(
        Category.TEXT, " a\n b ", content, meta
    )
    kept, copied = put.build("t").elements[0], add.build("t").elements[0]
    assert kept == copied
    assert kept.summary == "a b"
    assert kept.content is content  # the element's own: not copied
    assert kept.metadata is meta
    assert copied.content is not content
    assert copied.metadata is not meta
    assert put.put(Category.TEXT, "c", {"text": "c"}, {}) == ""  # the cap, as `add`'s
    assert put.build("t").metadata == {"truncated": True}


def test_builder_without_cap_says_nothing_of_truncation() -> None:
    b = PageBuilder(0)
    b.add(Category.TEXT, "a", {"text": "a"})
    assert b.build("t").metadata == {}


def test_request_errors_raised_while_reading_carry_the_uri_read() -> None:
    from dpe_server.model.errors import DocumentNotFound, InvalidUri, reading

    with pytest.raises(DocumentNotFound) as caught, reading("dpe://h/x-1"):
        raise DocumentNotFound("No document 'x-1'.")
    assert caught.value.data() == {"uri": "dpe://h/x-1", "dpe_code": 4201}
    with pytest.raises(InvalidUri) as invalid, reading("dpe://h/other"):
        raise InvalidUri("dpe://h/own", "scheme", "no")  # an error that knows its URI keeps it
    assert invalid.value.uri == "dpe://h/own"


def test_derived_summary_counts_pages_by_the_formats_page_unit() -> None:
    from dpe_server.model.metadata import derive_summary
    from dpe_server.model.tree import Document, Page, Properties

    doc = Document(Properties(2), (Page(0, "Intro"), Page(1, "Plan")))
    assert derive_summary(doc, "pptx", "slide") == "PPTX with 2 slides: Intro, Plan"
    assert derive_summary(doc, "docx", "section") == "DOCX with 2 sections: Intro, Plan"


@pytest.mark.parametrize(
    ("text", "rtl"),
    [
        pytest.param("שלום", True, id="hebrew"),
        pytest.param("مرحبا", True, id="arabic"),
        pytest.param("123 مرحبا", True, id="digits-then-arabic"),
        pytest.param("שלום עולם SENT_HEBREW", True, id="hebrew-naming-a-long-latin-word"),
        pytest.param("نستخدم Python و R للتحليل", True, id="arabic-naming-latin"),
        pytest.param("Python היא שפת תכנות", True, id="starts-latin-mostly-hebrew"),
        pytest.param("Hello שלום", False, id="tie-latin-first"),
        pytest.param("שלום Hello", True, id="tie-hebrew-first"),
        pytest.param("The word שלום means peace", False, id="latin-quoting-hebrew"),
        pytest.param("季度 東京都", False, id="cjk"),
        pytest.param("", False, id="empty"),
    ],
)
def test_direction_is_rtl_by_the_majority_of_words(text: str, rtl: bool) -> None:
    assert is_rtl(text) is rtl
