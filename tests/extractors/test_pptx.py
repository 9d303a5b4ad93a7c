"""The pptx extractor on the built fixtures: the tree per slide (order, categories, ids,
contents, titles, notes), properties, per-page reads, limits and errors."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from dpe_server.extractors import DEFAULT_LIMITS, Limits, for_suffix
from dpe_server.extractors.kit.package import Package
from dpe_server.extractors.pptx.extract import EXTRACTOR, extract, extract_pages, probe
from dpe_server.model.errors import CorruptError, EncryptedError, UnsupportedError
from dpe_server.model.tree import Document, Element, Page

EVERYTHING = "deck-everything.pptx"
I18N = "deck-i18n.pptx"


def _extract(path: Path, limits: Limits = DEFAULT_LIMITS) -> Document:
    with path.open("rb") as f:
        return extract(f, limits)


@pytest.fixture(scope="module")
def deck(fixture_dir: Path) -> Document:
    return _extract(fixture_dir / EVERYTHING)


@pytest.fixture(scope="module")
def i18n(fixture_dir: Path) -> Document:
    return _extract(fixture_dir / I18N)


def _el(doc: Document, element_id: str) -> Element:
    page = doc.pages[int(element_id[1 : element_id.index("-")])]
    found = page.element(element_id)
    assert found is not None, f"{element_id} missing from page {page.page_index}"
    return found


def _content(doc: Document, element_id: str) -> dict[str, Any]:
    return dict(_el(doc, element_id).content)


# Every slide of deck-everything.pptx: (element id, sentinel in its content), in order.
TREE: dict[int, list[tuple[str, str]]] = {
    0: [("p0-h1", "SENT_TITLE_0"), ("p0-h2", "SENT_SUBTITLE_0"), ("p0-ann1", "SENT_NOTES_0")],
    1: [
        ("p1-h1", "SENT_TITLE_1"),
        ("p1-lst1", "SENT_BULLET_A"),
        ("p1-lst2", "SENT_NUM_1"),
        ("p1-code1", "SENT_CODE"),
        ("p1-txt1", "SENT_LINK"),
        ("p1-lnk1", "SENT_URL"),
        ("p1-lnk2", "SENT_JUMP"),
        ("p1-ftr1", "SENT_DATE"),
        ("p1-ftr2", "SENT_FOOTER"),
        ("p1-ftr3", "slide_number"),
        ("p1-ann1", "SENT_NOTES_1"),
    ],
    2: [
        ("p2-h1", "SENT_TITLE_2"),
        ("p2-tbl1", "SENT_MERGED"),
        ("p2-lnk1", "SENT_CELL_URL"),
        ("p2-chart1", "SENT_SERIES"),
        ("p2-ann1", "SENT_NOTES_2"),
    ],
    3: [("p3-img1", "SENT_ALT")],
    4: [("p4-h1", "SENT_HIDDEN")],
    5: [
        ("p5-h1", "SENT_TITLE_5"),
        ("p5-dgm1", "SENT_DGM_2"),
        ("p5-txt1", "SENT_CXN_A"),
        ("p5-txt2", "SENT_CXN_B"),
        ("p5-dgm2", "SENT_CXN_B"),
    ],
    6: [
        ("p6-h1", "SENT_TITLE_6"),
        ("p6-vid1", "SENT_VIDEO"),
        ("p6-aud1", "SENT_AUDIO"),
        ("p6-txt1", "SENT_ACTION"),
        ("p6-lnk1", "SENT_ACTION_URL"),
        ("p6-txt2", "SENT_BACK"),
        ("p6-lnk2", "SENT_BACK"),
    ],
    7: [
        ("p7-h1", "SENT_TITLE_7"),
        ("p7-txt1", "SENT_FX_TEXT"),
        ("p7-fx1", "E=mc^2"),
        ("p7-wgt1", "SENT_WGT_CAPTION"),
    ],
    8: [("p8-h1", "SENT_TITLE_8"), ("p8-ann1", "SENT_COMMENT_A"), ("p8-ann2", "SENT_COMMENT_B")],
    9: [
        ("p9-h1", "SENT_TITLE_9"),
        ("p9-txt1", "SENT_GROUP_1"),
        ("p9-txt2", "SENT_GROUP_2"),
        ("p9-txt3", "SENT_GROUP_3"),
        ("p9-ann1", "SENT_MODERN_COMMENT"),
    ],
}


@pytest.mark.parametrize("index", sorted(TREE), ids=[f"slide{i}" for i in sorted(TREE)])
def test_pptx_tree_order_ids_and_sentinels(deck: Document, index: int) -> None:
    page = deck.pages[index]
    assert [e.element_id for e in page.elements] == [eid for eid, _ in TREE[index]]
    for element, (_, sentinel) in zip(page.elements, TREE[index], strict=True):
        assert sentinel in json.dumps(element.content, ensure_ascii=False)


def test_pptx_every_category_of_the_issue_is_produced(deck: Document) -> None:
    cats = {e.category.value for p in deck.pages for e in p.elements}
    assert cats == {
        "heading", "text", "list", "code", "table", "chart", "diagram", "image", "audio",
        "video", "link", "annotation", "formula", "footer", "widget",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("index", "title"),
    [
        (0, "Quarterly Review SENT_TITLE_0"),
        (3, "Slide 4"),
        (4, "Backup SENT_HIDDEN"),
        (9, "Groups SENT_TITLE_9"),
    ],
    ids=["title-slide", "picture-only", "hidden", "last"],
)
def test_pptx_page_title(deck: Document, index: int, title: str) -> None:
    assert deck.pages[index].title == title


def test_pptx_hidden_slide_flagged(deck: Document) -> None:
    assert [p.page_index for p in deck.pages if p.metadata.get("hidden")] == [4]


def test_pptx_layout_name_in_page_metadata(deck: Document) -> None:
    layouts = [p.metadata.get("layout") for p in deck.pages[:4]]
    assert layouts == ["Title Slide", "Title and Content", "Title Only", "Blank"]


def test_pptx_headings_title_level1_subtitle_level2(deck: Document) -> None:
    assert _content(deck, "p0-h1")["level"] == 1
    assert _content(deck, "p0-h2") == {"level": 2, "text": "Prepared by SENT_SUBTITLE_0"}


def test_pptx_body_bullets_inherited_from_master(deck: Document) -> None:
    assert _content(deck, "p1-lst1") == {
        "ordered": False,
        "items": [
            {"text": "First point SENT_BULLET_A", "level": 0},
            {"text": "Detail SENT_BULLET_A1", "level": 1},
            {"text": "Second point SENT_BULLET_B", "level": 0},
        ],
    }


def test_pptx_numbered_paragraphs_are_ordered_list(deck: Document) -> None:
    content = _content(deck, "p1-lst2")
    assert content["ordered"] is True
    assert [i["text"] for i in content["items"]] == ["Step one SENT_NUM_1", "Step two SENT_NUM_2"]


def test_pptx_monospace_text_is_code_keeping_indentation(deck: Document) -> None:
    assert _content(deck, "p1-code1")["text"] == "def sentinel():\n    return 'SENT_CODE'"


def test_pptx_run_hyperlink_and_slide_jump(deck: Document) -> None:
    assert _content(deck, "p1-lnk1") == {
        "text": "the SENT_LINK site",
        "url": "https://example.com/SENT_URL",
    }
    jump = _content(deck, "p1-lnk2")
    assert (jump["url"], jump["target_page"]) == ("#slide=3", 2)


def test_pptx_click_actions_on_shapes(deck: Document) -> None:
    assert _content(deck, "p6-lnk1")["url"] == "https://example.com/SENT_ACTION_URL"
    assert _content(deck, "p6-lnk2")["target_page"] == 0
    assert _el(deck, "p6-lnk2").metadata["kind"] == "click_action"


def test_pptx_footer_placeholders(deck: Document) -> None:
    kinds = [_content(deck, f"p1-ftr{n}")["kind"] for n in (1, 2, 3)]
    assert kinds == ["date", "footer", "slide_number"]
    assert _content(deck, "p1-ftr3")["text"] == "2"


def test_pptx_table_cells_and_merged_ranges(deck: Document) -> None:
    table = _el(deck, "p2-tbl1")
    assert table.content["headers"] == ["Region SENT_TH", "Q1", "Q2"]
    assert table.content["rows"][1] == ["South SENT_MERGED", "", "7"]
    assert (table.content["total_rows"], table.content["total_columns"]) == (3, 3)
    assert table.metadata["merged_cells"] == ["A3:B3"]


def test_pptx_chart_series(deck: Document) -> None:
    chart = _content(deck, "p2-chart1")
    assert chart["chart_type"] == "column"
    assert chart["title"] == "Revenue chart SENT_CHART"
    assert chart["series"][0]["categories"] == ["Q1 SENT_CAT", "Q2"]
    assert chart["series"][0]["values"] == [10.5, 12.25]
    assert chart["data_summary"]


def test_pptx_picture_alt_mime_size(deck: Document) -> None:
    image = _el(deck, "p3-img1")
    assert image.content == {
        "description": "A red square SENT_ALT",
        "mime_type": "image/png",
        "width": 40,
        "height": 30,
    }
    assert image.metadata["part"] == "ppt/media/image1.png"
    assert image.metadata["display_size"] == [384, 288]


def test_pptx_smartart_nodes(deck: Document) -> None:
    content = _content(deck, "p5-dgm1")
    assert content["kind"] == "smartart"
    assert content["nodes"] == ["Plan SENT_DGM_1", "Build SENT_DGM_2", "Ship SENT_DGM_3"]


def test_pptx_connector_diagram_nodes_and_edges(deck: Document) -> None:
    content = _content(deck, "p5-dgm2")
    assert content["kind"] == "connector"
    assert content["nodes"] == ["Start SENT_CXN_A", "Finish SENT_CXN_B"]
    assert content["edges"] == [[0, 1]]


def test_pptx_embedded_video_and_linked_audio(deck: Document) -> None:
    video = _content(deck, "p6-vid1")
    assert (video["mime_type"], video["embedded"]) == ("video/mp4", True)
    audio = _content(deck, "p6-aud1")
    assert audio["url"] == "https://example.com/SENT_AUDIO.mp3"
    assert (audio["mime_type"], audio["embedded"]) == ("audio/mpeg", False)
    assert audio["description"] == "Theme tune SENT_AUDIO_ALT"


def test_pptx_equation_is_formula_and_fallback_is_never_read(deck: Document) -> None:
    assert _content(deck, "p7-fx1") == {"expression": "E=mc^2"}
    assert "SENT_FALLBACK_NEVER" not in json.dumps(deck.to_json())


def test_pptx_activex_control_is_widget(deck: Document) -> None:
    assert _content(deck, "p7-wgt1") == {
        "kind": "command_button",
        "name": "SENT_WGT_Button",
        "text": "Press SENT_WGT_CAPTION",
    }


def test_pptx_speaker_notes_keep_lines(deck: Document) -> None:
    notes = _content(deck, "p0-ann1")
    assert notes == {
        "text": "Speaker notes SENT_NOTES_0 first line\nsecond line",
        "kind": "speaker_notes",
    }


def test_pptx_legacy_comments_with_authors(deck: Document) -> None:
    authors = [_content(deck, f"p8-ann{n}")["author"] for n in (1, 2)]
    assert authors == ["Ada SENT_AUTHOR_A", "Bob SENT_AUTHOR_B"]
    assert _content(deck, "p8-ann1")["kind"] == "comment"


def test_pptx_modern_comment_reply_is_nested_under_its_parent(deck: Document) -> None:
    (reply,) = _content(deck, "p9-ann1")["replies"]
    assert reply["author"] == "Cy SENT_MODERN_AUTHOR"
    assert _content(deck, "p9-ann1")["resolved"] is True  # status="resolved"


def test_pptx_element_metadata_has_shape_id(deck: Document) -> None:
    table = _el(deck, "p2-tbl1")
    assert isinstance(table.metadata["shape_id"], int)


def test_pptx_properties_title_keywords_summary(deck: Document) -> None:
    props = deck.properties
    assert props.title == "Everything deck SENT_DOC_TITLE"
    assert props.keywords == ("alpha SENT_KW", "beta")
    assert props.summary == "Subject SENT_SUBJECT"
    assert props.page_count == 10


def test_pptx_properties_absent_stay_empty(i18n: Document) -> None:
    assert (i18n.properties.title, i18n.properties.keywords, i18n.properties.summary) == (
        None,
        (),
        None,
    )


def test_pptx_cjk_title_and_rtl_text(i18n: Document) -> None:
    assert i18n.pages[0].title == "季度报告 SENT_CJK_TITLE"
    assert _content(i18n, "p0-lst1")["items"][0]["text"] == "收入增长百分之十"
    assert _content(i18n, "p0-txt1") == {"text": "مرحبا بالعالم SENT_RTL", "direction": "rtl"}
    assert _content(i18n, "p1-ann1")["text"] == "ノート SENT_JA_NOTES"


def test_pptx_probe_matches_extract(fixture_dir: Path, deck: Document) -> None:
    with (fixture_dir / EVERYTHING).open("rb") as f:
        props = probe(f, DEFAULT_LIMITS)
    assert props.page_titles == tuple(p.title for p in deck.pages)
    assert props.to_json() == deck.properties.to_json()


def test_pptx_extract_pages_equals_full_extract(fixture_dir: Path, deck: Document) -> None:
    with (fixture_dir / EVERYTHING).open("rb") as f:
        pages = extract_pages(f, [7, 2, 99], DEFAULT_LIMITS)
    assert [p.to_json() for p in pages] == [deck.pages[7].to_json(), deck.pages[2].to_json()]


def test_pptx_extract_pages_parses_only_that_slide(
    fixture_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []
    original = Package.read

    def spy(self: Package, name: str) -> bytes:
        seen.append(name)
        return original(self, name)

    monkeypatch.setattr(Package, "read", spy)
    with (fixture_dir / EVERYTHING).open("rb") as f:
        extract_pages(f, [2], DEFAULT_LIMITS)
    slides = sorted(n for n in seen if n.startswith("ppt/slides/slide"))
    assert slides == ["ppt/slides/slide3.xml"]


def test_pptx_registered_for_both_suffixes() -> None:
    assert for_suffix(".pptx") is EXTRACTOR
    assert for_suffix(".PPTM") is EXTRACTOR


def test_pptx_element_limit_truncates_page(fixture_dir: Path) -> None:
    doc = _extract(fixture_dir / EVERYTHING, Limits(max_elements_per_page=3))
    page = doc.pages[1]
    assert len(page.elements) == 3
    assert page.metadata["truncated"] is True
    assert doc.metadata["truncated"] is True


def test_pptx_page_limit_truncates_document(fixture_dir: Path) -> None:
    doc = _extract(fixture_dir / EVERYTHING, Limits(max_pages=3))
    assert len(doc.pages) == 3
    assert doc.properties.page_count == 10
    assert doc.metadata["truncated"] is True


def _rezip(source: Path, replace: dict[str, bytes | None]) -> io.BytesIO:
    out = io.BytesIO()
    with zipfile.ZipFile(source) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            if info.filename in replace:
                data = replace[info.filename]
                if data is not None:
                    dst.writestr(info.filename, data)
            else:
                dst.writestr(info, src.read(info))
    out.seek(0)
    return out


def test_pptx_broken_slide_xml_costs_only_that_slide(fixture_dir: Path) -> None:
    f = _rezip(fixture_dir / EVERYTHING, {"ppt/slides/slide3.xml": b"<p:sld><oops"})
    doc = extract(f, DEFAULT_LIMITS)
    assert doc.pages[2].metadata == {"broken": True}
    assert doc.pages[2].title == "Slide 3"
    assert doc.pages[3].elements[0].element_id == "p3-img1"


def test_pptx_missing_chart_part_is_counted(fixture_dir: Path) -> None:
    f = _rezip(fixture_dir / EVERYTHING, {"ppt/charts/chart1.xml": None})
    page: Page = extract_pages(f, [2], DEFAULT_LIMITS)[0]
    assert [e.category.value for e in page.elements] == ["heading", "table", "link", "annotation"]
    assert page.metadata["broken_parts"] == 1


def _cfb(stream: str) -> bytes:
    return b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 504 + stream.encode("utf-16-le")


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (b"", CorruptError),
        (b"not a zip at all", CorruptError),
        (_cfb("EncryptedPackage"), EncryptedError),
        (_cfb("PowerPoint Document"), UnsupportedError),
    ],
    ids=["empty", "junk", "encrypted", "legacy-ppt"],
)
def test_pptx_unreadable_input_raises_project_error(data: bytes, error: type[Exception]) -> None:
    with pytest.raises(error):
        extract(io.BytesIO(data), DEFAULT_LIMITS)


def test_pptx_truncated_file_is_corrupt(fixture_dir: Path) -> None:
    data = (fixture_dir / EVERYTHING).read_bytes()
    with pytest.raises(CorruptError):
        extract(io.BytesIO(data[: len(data) // 2]), DEFAULT_LIMITS)


def test_pptx_other_ooxml_is_unsupported() -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr(
            "_rels/.rels",
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            '<Relationship Id="rId1" Target="xl/workbook.xml" Type="http://schemas.openxmlformats'
            '.org/officeDocument/2006/relationships/officeDocument"/></Relationships>',
        )
        z.writestr("xl/workbook.xml", "<workbook/>")
    out.seek(0)
    with pytest.raises(UnsupportedError):
        probe(out, DEFAULT_LIMITS)


def test_pptx_rtl_detected_from_script_without_flag(i18n: Document) -> None:
    assert _content(i18n, "p1-txt1") == {"text": "שלום עולם SENT_HEBREW", "direction": "rtl"}


def test_pptx_strict_ooxml_reads_like_transitional(fixture_dir: Path, deck: Document) -> None:
    transitional_to_strict = {
        b"http://schemas.openxmlformats.org/presentationml/2006/main": b"presentationml/main",
        b"http://schemas.openxmlformats.org/drawingml/2006/main": b"drawingml/main",
        b"http://schemas.openxmlformats.org/officeDocument/2006/relationships": (
            b"officeDocument/relationships"
        ),
    }
    replace: dict[str, bytes | None] = {}
    with zipfile.ZipFile(fixture_dir / EVERYTHING) as z:
        for name in z.namelist():
            if name.endswith((".xml", ".rels")):
                data = z.read(name)
                for old, new in transitional_to_strict.items():
                    data = data.replace(old, b"http://purl.oclc.org/ooxml/" + new)
                replace[name] = data
    strict = extract(_rezip(fixture_dir / EVERYTHING, replace), DEFAULT_LIMITS)
    assert strict.to_json() == deck.to_json()
