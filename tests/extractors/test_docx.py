"""The docx extractor on the built fixtures: pages, categories, contents, ids, errors."""

from __future__ import annotations

import functools
import gc
import io
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from dpe_server.extractors import DEFAULT_LIMITS, for_suffix
from dpe_server.extractors.docx.extract import extract, extract_pages, probe
from dpe_server.extractors.gcpause import collector_paused
from dpe_server.extractors.registry import format_of
from dpe_server.model.errors import CorruptError, ExtractionError, UnsupportedError
from dpe_server.model.tree import Category, Document, Element, parse_element_id

EVERYTHING = "doc-everything.docx"


@functools.cache
def _extract(path: Path) -> Document:
    with path.open("rb") as f:
        return extract(f, DEFAULT_LIMITS)


@pytest.fixture(scope="module")
def everything(fixture_dir: Path) -> Document:
    return _extract(fixture_dir / EVERYTHING)


def _elements(doc: Document, category: Category) -> list[tuple[int, Element]]:
    return [(p.page_index, e) for p in doc.pages for e in p.elements if e.category is category]


def _matches(content: Mapping[str, Any], expected: Mapping[str, Any]) -> bool:
    return all(content.get(k) == v for k, v in expected.items())


def _all_text(doc: Document) -> str:
    return "\n".join(str(e.content) for p in doc.pages for e in p.elements)


# --- pages ------------------------------------------------------------------------------------


def test_pages_everything_titles(everything: Document) -> None:
    assert [p.title for p in everything.pages] == [
        "SENT-TITLE Kitchen sink",
        "SENT-H1-ALPHA",
        "SENT-H1-BETA",
        "Section 2",
        "SENT-H1-GAMMA",
    ]


def test_pages_start_at_top_level_headings_only(everything: Document) -> None:
    first_headings = [
        next(e for e in p.elements if e.category is Category.HEADING).content["text"]
        for p in everything.pages
        if any(e.category is Category.HEADING for e in p.elements)
    ]
    assert "SENT-H2-SUB" not in first_headings
    page1 = [e.content.get("text") for e in everything.pages[1].elements]
    assert "SENT-H2-SUB" in page1
    assert "SENT-LOCALIZED-H3" in page1


def test_pages_section_break_starts_a_page(everything: Document) -> None:
    before, after = everything.pages[2], everything.pages[3]
    body = [e for e in before.elements if e.category is not Category.FOOTER]
    assert body[-1].content == {"kind": "section_break"}
    assert before.metadata["section"] == 1
    assert after.metadata["section"] == 2
    texts = [e.content.get("text") for e in after.elements if e.category is Category.TEXT]
    assert texts == ["Section two opens SENT-SECTION2."]


def test_pages_content_before_first_heading_is_page_zero(everything: Document) -> None:
    texts = [e.content.get("text") for e in everything.pages[0].elements]
    assert "Introduction SENT-INTRO before any heading." in texts


def test_pages_headers_and_footers_follow_their_section(everything: Document) -> None:
    def headers(page: int) -> dict[str, str]:
        return {
            str(e.content["variant"]): str(e.content["text"])
            for e in everything.pages[page].elements
            if e.category is Category.HEADER
        }

    assert headers(0) == {"default": "SENT-HEADER-ONE", "first": "SENT-FIRST-HEADER"}
    assert headers(4)["default"] == "SENT-HEADER-TWO"
    for page in everything.pages:
        assert page.elements[0].category is Category.HEADER
        assert page.elements[-1].category is Category.FOOTER
        assert page.elements[-1].content["text"] == "SENT-FOOTER-ONE"


def test_pages_long_section_has_continuation_pages(fixture_dir: Path) -> None:
    doc = _extract(fixture_dir / "doc-long.docx")
    assert [p.title for p in doc.pages] == [
        "SENT-LONG",
        "SENT-LONG (cont. 2)",
        "SENT-LONG (cont. 3)",
    ]
    assert doc.pages[2].metadata["continued_from"] == 0
    lines = [
        e.content["text"] for p in doc.pages for e in p.elements if e.category is Category.TEXT
    ]
    assert lines == [f"Line {i + 1} SENT-LONG-LINE" for i in range(450)]


def test_pages_no_headings_gives_one_page(fixture_dir: Path) -> None:
    doc = _extract(fixture_dir / "doc-plain.docx")
    assert [p.title for p in doc.pages] == ["Section 1"]
    assert [e.category for e in doc.pages[0].elements] == [Category.TEXT] * 5


@pytest.mark.parametrize(
    "name",
    ["doc-everything.docx", "doc-long.docx", "doc-plain.docx", "doc-i18n.docx", "doc-strict.docx"],
)
def test_probe_matches_extraction(fixture_dir: Path, name: str) -> None:
    with (fixture_dir / name).open("rb") as f:
        props = probe(f, DEFAULT_LIMITS)
    doc = _extract(fixture_dir / name)
    assert props.page_count == len(doc.pages)
    assert props.page_titles == tuple(p.title for p in doc.pages)


def test_extract_pages_equals_whole_extraction(fixture_dir: Path, everything: Document) -> None:
    with (fixture_dir / EVERYTHING).open("rb") as f:
        pages = extract_pages(f, [3, 1, 99], DEFAULT_LIMITS)
    assert [p.page_index for p in pages] == [1, 3]
    assert pages[1] == everything.pages[3]


# --- categories and contents ------------------------------------------------------------------


def test_categories_everything_but_pivot_tables(everything: Document) -> None:
    found = {e.category for p in everything.pages for e in p.elements}
    assert found == set(Category) - {Category.PIVOT_TABLE}


CONTENTS = [
    ("title", Category.HEADING, {"text": "SENT-TITLE Kitchen sink", "level": 1}),
    ("heading-1", Category.HEADING, {"text": "SENT-H1-ALPHA", "level": 1}),
    ("heading-2", Category.HEADING, {"text": "SENT-H2-SUB", "level": 2}),
    ("localized-style-id", Category.HEADING, {"text": "SENT-LOCALIZED-H3", "level": 3}),
    ("outline-level", Category.HEADING, {"text": "SENT-OUTLINE-H2", "level": 2}),
    ("text-with-tab", Category.TEXT, {"text": "Alpha body SENT-ALPHA-TEXT with\tone tab."}),
    (
        "bullets-with-level",
        Category.LIST,
        {
            "ordered": False,
            "items": [
                {"text": "SENT-BULLET-1", "level": 0},
                {"text": "SENT-BULLET-2", "level": 0},
                {"text": "SENT-BULLET-NESTED", "level": 1},
            ],
        },
    ),
    (
        "numbered",
        Category.LIST,
        {
            "ordered": True,
            "items": [
                {"text": f"SENT-NUMBER-{i}", "level": 0, "label": f"{i}."} for i in (1, 2, 3)
            ],
        },
    ),
    (
        "code-style-and-mono-font",
        Category.CODE,
        {"text": "def sent_code():\n    return 'SENT-CODE'\nprint('SENT-MONO')"},
    ),
    (
        "link-external",
        Category.LINK,
        {"text": "SENT-LINK-TEXT", "url": "https://example.com/sent-link"},
    ),
    ("link-bookmark", Category.LINK, {"text": "SENT-BOOKMARK-LINK", "url": "#sent_mark"}),
    (
        "link-field",
        Category.LINK,
        {"text": "SENT-FIELD-LINK", "url": "https://example.com/sent-field"},
    ),
    (
        "image-inline",
        Category.IMAGE,
        {
            "description": "SENT-ALT inline picture",
            "mime_type": "image/png",
            "width": 96,
            "height": 48,
        },
    ),
    (
        "image-anchored",
        Category.IMAGE,
        {"description": "SENT-ANCHOR-ALT", "mime_type": "image/png"},
    ),
    ("chart", Category.CHART, {"chart_type": "column", "title": "SENT-CHART Sales"}),
    ("diagram", Category.DIAGRAM, {"nodes": ["SENT-NODE-A", "SENT-NODE-B", "SENT-NODE-C"]}),
    ("formula-inline", Category.FORMULA, {"expression": "E=mc^2"}),
    ("formula-display", Category.FORMULA, {"expression": "a/b"}),
    (
        "comment",
        Category.ANNOTATION,
        {
            "kind": "comment",
            "text": "SENT-COMMENT body",
            "author": "SENT Reviewer",
            "anchor": "SENT-ANCHORED-TEXT",
        },
    ),
    ("footnote", Category.ANNOTATION, {"kind": "footnote", "text": "SENT-FOOTNOTE text"}),
    ("endnote", Category.ANNOTATION, {"kind": "endnote", "text": "SENT-ENDNOTE text"}),
    (
        "insertion",
        Category.ANNOTATION,
        {"kind": "insertion", "text": "SENT-INSERTED", "author": "SENT Editor"},
    ),
    (
        "deletion",
        Category.ANNOTATION,
        {"kind": "deletion", "text": "SENT-DELETED", "author": "SENT Editor"},
    ),
    ("page-break", Category.SEPARATOR, {"kind": "page_break"}),
    ("column-break", Category.SEPARATOR, {"kind": "column_break"}),
    ("rule", Category.SEPARATOR, {"kind": "rule"}),
    ("section-break", Category.SEPARATOR, {"kind": "section_break"}),
    ("first-page-header", Category.HEADER, {"text": "SENT-FIRST-HEADER", "variant": "first"}),
    ("footer", Category.FOOTER, {"text": "SENT-FOOTER-ONE", "variant": "default"}),
    ("widget-activex", Category.WIDGET, {"kind": "activex", "name": "SENTCheckBox1"}),
    ("video-ole", Category.VIDEO, {"name": "sentclip.mp4", "mime_type": "video/mp4"}),
    ("audio-ole", Category.AUDIO, {"name": "sentsound.wav", "mime_type": "audio/wav"}),
    (
        "video-online",
        Category.VIDEO,
        {"url": "https://www.youtube.com/embed/SENTVIDEO", "description": "SENT-VIDEO-DESC"},
    ),
    ("altchunk-heading", Category.HEADING, {"text": "SENT-HTML-HEAD", "level": 2}),
    ("altchunk-text", Category.TEXT, {"text": "SENT-HTML-PARA with bold text"}),
    (
        "altchunk-table",
        Category.TABLE,
        {"headers": ["Name", "Value"], "rows": [["SENT-HTML-CELL", "1"]]},
    ),
    ("textbox", Category.TEXT, {"text": "SENT-TEXTBOX inside"}),
    ("vml-textbox", Category.TEXT, {"text": "SENT-VML-TEXTBOX"}),
]


@pytest.mark.parametrize(
    ("category", "expected"), [c[1:] for c in CONTENTS], ids=[c[0] for c in CONTENTS]
)
def test_content_of_each_construct(
    everything: Document, category: Category, expected: Mapping[str, Any]
) -> None:
    contents = [e.content for _, e in _elements(everything, category)]
    assert any(_matches(c, expected) for c in contents), contents


def test_comment_replies_nest_under_the_comment_they_answer(everything: Document) -> None:
    """Word's replies (comments of their own, linked by commentsExtended.xml) are the thread
    of the comment they answer, in order, never annotations of their own; `w15:done` on the
    thread's comment marks it resolved."""
    comments = [e.content for _, e in _elements(everything, Category.ANNOTATION)]
    comments = [c for c in comments if c["kind"] == "comment"]
    assert len(comments) == 1, comments
    assert comments[0] == {
        "text": "SENT-COMMENT body",
        "kind": "comment",
        "author": "SENT Reviewer",
        "anchor": "SENT-ANCHORED-TEXT",
        "date": "2024-01-01T00:00:00Z",
        "replies": [
            {"text": "SENT-REPLY one", "author": "SENT Replier", "date": "2024-01-02T09:30:00Z"},
            {"text": "SENT-REPLY two", "author": "SENT Reviewer", "date": "2024-01-03T10:00:00Z"},
        ],
        "resolved": True,
    }


FORMS = [
    ("legacy-text", {"name": "SENTText1", "type": "text", "value": "SENT-FORMVALUE"}),
    (
        "legacy-checkbox",
        {"name": "SENTCheck1", "type": "checkbox", "kind": "checkbox", "checked": True},
    ),
    (
        "legacy-dropdown",
        {
            "name": "SENTDrop1",
            "type": "dropdown",
            "value": "SENT-GREEN",
            "options": ["Red", "SENT-GREEN"],
        },
    ),
    (
        "sdt-plain",
        {"name": "SENT Plain", "type": "plain_text", "value": "SENT-SDT-PLAIN", "tag": "plaintag"},
    ),
    ("sdt-nested", {"name": "SENT Nested", "type": "rich_text", "value": "SENT-NESTED-SDT"}),
    (
        "sdt-dropdown",
        {
            "name": "SENT Choice",
            "type": "dropdown",
            "value": "SENT-TWO",
            "options": ["One", "SENT-TWO"],
        },
    ),
    (
        "sdt-date",
        {"name": "SENT Date", "type": "date", "value": "2/3/2024", "date": "2024-02-03T00:00:00Z"},
    ),
    (
        "sdt-checkbox",
        {"name": "SENT Box", "label": "SENT Box", "kind": "checkbox", "checked": True},
    ),
]


@pytest.mark.parametrize("expected", [f[1] for f in FORMS], ids=[f[0] for f in FORMS])
def test_content_of_each_form_field(everything: Document, expected: Mapping[str, Any]) -> None:
    fields = [f for _, e in _elements(everything, Category.FORM) for f in e.content["fields"]]
    assert any(_matches(f, expected) for f in fields), fields


def test_content_structural_content_control_is_not_a_form(everything: Document) -> None:
    fields = [f for _, e in _elements(everything, Category.FORM) for f in e.content["fields"]]
    assert len(fields) == len(FORMS)


def test_content_deleted_text_left_out_and_inserted_kept(everything: Document) -> None:
    texts = [str(e.content["text"]) for _, e in _elements(everything, Category.TEXT)]
    assert "Kept SENT-INSERTED" in texts
    assert not any("SENT-DELETED" in t for t in texts)


def test_content_text_box_read_once(everything: Document) -> None:
    texts = [e.content["text"] for _, e in _elements(everything, Category.TEXT)]
    assert texts.count("SENT-TEXTBOX inside") == 1


def test_content_page_break_splits_paragraph_text(everything: Document) -> None:
    texts = [e.content["text"] for _, e in _elements(everything, Category.TEXT)]
    assert "SENT-BEFORE-PAGEBREAK\nSENT-AFTER-PAGEBREAK" in texts


def test_content_html_script_never_read(everything: Document) -> None:
    assert "SENT-SCRIPT-NEVER" not in _all_text(everything)


def test_content_table_merges_resolved(everything: Document) -> None:
    (_, table), *_ = _elements(everything, Category.TABLE)
    assert table.content["headers"] == ["SENT-MERGED-HEAD", "", "SENT-CELL-02"]
    assert table.content["rows"][0] == ["SENT-CELL-10", "SENT-CELL-11", "SENT-VMERGED"]
    assert table.content["rows"][1][2] == ""
    assert table.metadata["merged_cells"] == ["A1:B1", "C2:C3"]
    assert (table.content["total_rows"], table.content["total_columns"]) == (2, 3)


def test_content_nested_table_referenced_by_id(everything: Document) -> None:
    tables = dict((e.element_id, e) for _, e in _elements(everything, Category.TABLE))
    parent, child = tables["p1-tbl1"], tables["p1-tbl2"]
    assert parent.content["rows"][1][0] == "SENT-CELL-20\n[table p1-tbl2]"
    assert parent.content["nested_tables"] == ["p1-tbl2"]
    assert child.metadata["nested_in"] == "p1-tbl1"
    assert child.content["headers"] == ["SENT-NESTED-CELL", ""]


def test_content_i18n_properties_and_scripts(fixture_dir: Path) -> None:
    doc = _extract(fixture_dir / "doc-i18n.docx")
    props = doc.properties
    assert props.title == "SENT-PROPS 标题"
    assert props.keywords == ("alpha", "测试", "gamma")
    assert props.summary == "SENT-SUBJECT 摘要"
    texts = [e.content.get("text") for p in doc.pages for e in p.elements]
    assert "第一章 SENT-CJK-HEAD" in texts
    assert "שלום עולם SENT-RTL" in texts
    assert "مرحبا بالعالم SENT-ARABIC" in texts
    directions = {e.content["text"]: e.content.get("direction") for e in doc.pages[0].elements}
    assert directions["שלום עולם SENT-RTL"] == "rtl"
    assert directions["مرحبا بالعالم SENT-ARABIC"] == "rtl"
    assert directions["第一章 SENT-CJK-HEAD"] is None


def test_content_no_properties_means_none(everything: Document) -> None:
    assert (everything.properties.title, everything.properties.keywords) == (None, ())
    assert everything.properties.summary is None


def test_content_strict_ooxml_is_read(fixture_dir: Path) -> None:
    doc = _extract(fixture_dir / "doc-strict.docx")
    assert [p.title for p in doc.pages] == ["Section 1", "SENT-STRICT-HEAD"]
    texts = [e.content.get("text") for p in doc.pages for e in p.elements]
    assert texts == ["SENT-STRICT-INTRO", "SENT-STRICT-HEAD", "SENT-STRICT-TEXT"]


# --- ids and the tree ---------------------------------------------------------------------------


def test_ids_name_their_page_and_count_per_category(everything: Document) -> None:
    seen: set[str] = set()
    for page in everything.pages:
        counts: dict[Category, int] = {}
        for el in page.elements:
            parts = parse_element_id(el.element_id)
            assert parts is not None
            assert parts.page_index == page.page_index
            assert parts.category is el.category
            counts[el.category] = counts.get(el.category, 0) + 1
            assert parts.n == counts[el.category]
            assert el.element_id not in seen
            seen.add(el.element_id)


def test_ids_stable_across_runs(fixture_dir: Path, everything: Document) -> None:
    with (fixture_dir / EVERYTHING).open("rb") as f:
        again = extract(f, DEFAULT_LIMITS)
    assert again == everything


def test_tree_json_round_trip(everything: Document) -> None:
    assert Document.from_json(everything.to_json()) == everything


def test_summaries_are_one_short_line(everything: Document) -> None:
    for page in everything.pages:
        for el in page.elements:
            assert el.summary
            assert "\n" not in el.summary
            assert len(el.summary) <= 120


def test_registry_maps_docx_and_docm() -> None:
    for suffix in (".docx", ".docm"):
        assert for_suffix(suffix) is not None
        fmt = format_of(f"a{suffix.upper()}")
        assert fmt is not None
        assert fmt.name == "docx"


# --- errors -------------------------------------------------------------------------------------


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


_RELS = (
    b'<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    b'<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
    b'relationships/officeDocument" Target="%s"/></Relationships>'
)
_W = b"http://schemas.openxmlformats.org/wordprocessingml/2006/main"

ERRORS = [
    ("empty", b"", CorruptError),
    ("junk", b"not a zip at all, just words", CorruptError),
    ("no-main-part", _zip({"readme.txt": b"hello"}), CorruptError),
    ("odt", _zip({"mimetype": b"application/vnd.oasis.opendocument.text"}), UnsupportedError),
    (
        "xlsx-renamed",
        _zip(
            {
                "_rels/.rels": _RELS % b"xl/workbook.xml",
                "xl/workbook.xml": b'<workbook xmlns="http://schemas.openxmlformats.org/'
                b'spreadsheetml/2006/main"/>',
            }
        ),
        UnsupportedError,
    ),
    (
        "doctype",
        _zip(
            {
                "_rels/.rels": _RELS % b"word/document.xml",
                "word/document.xml": b'<!DOCTYPE d [<!ENTITY x "y">]><w:document xmlns:w="'
                + _W
                + b'"><w:body/></w:document>',
            }
        ),
        CorruptError,
    ),
    (
        "no-body",
        _zip(
            {
                "_rels/.rels": _RELS % b"word/document.xml",
                "word/document.xml": b'<w:document xmlns:w="' + _W + b'"/>',
            }
        ),
        CorruptError,
    ),
    (
        "broken-xml",
        _zip(
            {
                "_rels/.rels": _RELS % b"word/document.xml",
                "word/document.xml": b'<w:document xmlns:w="' + _W + b'"><w:body><w:p>',
            }
        ),
        CorruptError,
    ),
]


@pytest.mark.parametrize(("data", "error"), [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_errors_are_project_errors(data: bytes, error: type[ExtractionError]) -> None:
    for entry in (extract, probe):
        with pytest.raises(error) as info:
            entry(io.BytesIO(data), DEFAULT_LIMITS)
        assert "\n" not in info.value.message


def test_errors_truncated_fixture_is_corrupt(fixture_dir: Path) -> None:
    data = (fixture_dir / EVERYTHING).read_bytes()
    with pytest.raises(CorruptError):
        extract(io.BytesIO(data[: len(data) // 2]), DEFAULT_LIMITS)


def test_extraction_leaves_nothing_to_the_cyclic_collector(fixture_dir: Path) -> None:
    """What an extraction builds is freed by reference counting once it returns: the body's
    blocks (and through them the whole parsed document.xml) were held by a closure that called
    itself, a reference cycle, until the next full garbage collection. (Read once before:
    the modules a first extraction imports leave cycles of their own.)"""
    path = fixture_dir / "doc-long.docx"
    assert _extract(path).pages
    with collector_paused():
        gc.collect()
        with path.open("rb") as f:
            assert extract(f, DEFAULT_LIMITS).pages
        assert gc.collect() == 0
