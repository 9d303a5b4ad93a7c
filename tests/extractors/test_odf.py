"""OpenDocument texts and presentations (issue 18): every category each can hold, read from
the fixtures written by `fixtures/builders/odf.py`, and the checks before parsing."""

from __future__ import annotations

import dataclasses
import gc
import io
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from dpe_server.extractors import DEFAULT_LIMITS, file_type, for_path, format_of
from dpe_server.extractors.gcpause import collector_paused
from dpe_server.extractors.odf.flat import FlatDocument
from dpe_server.isolation.precheck import precheck
from dpe_server.model.errors import CorruptError, EncryptedError, TooLargeError, UnsupportedError
from dpe_server.model.tree import Category, Document, Element
from fixtures.builders import flat_odf, odf


def _read(path: Path) -> Document:
    extractor = for_path(path)
    assert extractor is not None
    with path.open("rb") as f:
        return extractor.extract(f, DEFAULT_LIMITS)


@pytest.fixture(scope="module")
def odt(tmp_path_factory: pytest.TempPathFactory) -> Document:
    return _read(odf.build_text(tmp_path_factory.mktemp("odt")))


@pytest.fixture(scope="module")
def odp(tmp_path_factory: pytest.TempPathFactory) -> Document:
    return _read(odf.build_deck(tmp_path_factory.mktemp("odp")))


def _all(doc: Document, category: Category) -> list[Element]:
    return [e for p in doc.pages for e in p.elements if e.category is category]


def _one(doc: Document, category: Category, needle: str) -> Element:
    found = [e for e in _all(doc, category) if needle in str(e.content)]
    assert len(found) == 1, (category, needle, found)
    return found[0]


def test_odt_pages_start_at_top_level_headings(odt: Document) -> None:
    titles = ["SENT-ODT-TITLE Open report", "Introduction", "Results"]
    assert [p.title for p in odt.pages] == titles
    assert odt.properties.page_titles == tuple(titles)
    title = _one(odt, Category.HEADING, "SENT-ODT-TITLE")
    assert title.content["level"] == 1
    assert title.metadata == {"style": "Title"}
    heading = _one(odt, Category.HEADING, "Lists")
    assert heading.content == {"level": 2, "text": "Lists"}


def test_odt_metadata_from_meta_xml(odt: Document) -> None:
    props = odt.properties
    assert props.title == "Open report"
    assert props.keywords == ("odf", "report")
    assert props.summary == "SENT-ODT-DESCRIPTION A text in OpenDocument."
    assert props.extra == {
        "creator": "Ada Author",
        "lastModifiedBy": "Bo Editor",
        "created": "2026-01-01T09:00:00",
        "modified": "2026-01-02T10:30:00",
    }


def test_odt_text_keeps_spaces_and_links(odt: Document) -> None:
    para = _one(odt, Category.TEXT, "SENT-ODT-PARA")
    assert para.content["text"].startswith("SENT-ODT-PARA The first  paragraph  with the spec")
    links = {e.content["url"]: e for e in _all(odt, Category.LINK)}
    assert links["https://example.org/spec"].content["text"] == "the spec"
    assert links["#Results"].metadata == {"bookmark": "Results"}


def test_odt_lists_ordered_from_their_style(odt: Document) -> None:
    bullets = _one(odt, Category.LIST, "BULLET-1 apples")
    assert bullets.content["ordered"] is False
    assert [i["level"] for i in bullets.content["items"]] == [0, 1, 0]
    numbered = _one(odt, Category.LIST, "NUM-1 plan")
    assert numbered.content["ordered"] is True
    assert [i["label"] for i in numbered.content["items"]] == ["1.", "1.1.", "1.2.", "2."]
    letters = _one(odt, Category.LIST, "LETTER-c")
    assert letters.content["start"] == 3
    assert [i["label"] for i in letters.content["items"]] == ["c)", "d)"]


def test_odt_notes_comments_and_changes(odt: Document) -> None:
    kinds = {e.content["kind"]: e.content for e in _all(odt, Category.ANNOTATION)}
    assert kinds["footnote"]["text"] == "SENT-ODT-FOOTNOTE Source: survey."
    assert kinds["endnote"]["text"] == "SENT-ODT-ENDNOTE Revised later."
    comment = kinds["comment"]
    assert comment["author"] == "Ann Critic"
    assert comment["date"] == "2026-01-04T12:00:00"
    assert comment["anchor"] == "north figures"
    assert kinds["insertion"]["text"] == "new words"
    assert kinds["deletion"]["text"] == "SENT-ODT-DELETED old wording"
    assert kinds["deletion"]["author"] == "Cy Reviewer"


def test_a_deletion_written_as_a_range_leaves_the_paragraph() -> None:
    """LibreOffice writes a deletion as text:change-start…text:change-end around the deleted
    text (its changed-region holds none): the paragraph reads as it is now, without it, and
    the deletion annotation holds it; an insertion's range stays in the text."""
    from lxml import etree

    from dpe_server.extractors.odf.inline import InlineReader, tracked_changes

    ns = 'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
    ns += 'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    ns += 'xmlns:dc="http://purl.org/dc/elements/1.1/"'
    body = etree.fromstring(
        f"<office:text {ns}><text:tracked-changes>"
        '<text:changed-region text:id="i"><text:insertion><office:change-info>'
        "<dc:creator>Ed</dc:creator></office:change-info></text:insertion></text:changed-region>"
        '<text:changed-region text:id="d"><text:deletion><office:change-info>'
        "<dc:creator>Ed</dc:creator></office:change-info></text:deletion></text:changed-region>"
        "</text:tracked-changes>"
        '<text:p>Kept <text:change-start text:change-id="i"/>ADDED<text:change-end '
        'text:change-id="i"/><text:change-start text:change-id="d"/>GONE<text:change-end '
        'text:change-id="d"/> and after.</text:p></office:text>'
    )
    reader = InlineReader(None, tracked_changes(body))  # type: ignore[arg-type]
    para = reader.paragraph(body[1])
    assert para.text == "Kept ADDED and after."
    assert [(i.content["kind"], i.content["text"]) for i in para.items] == [
        ("insertion", "ADDED"),
        ("deletion", "GONE"),
    ]


def test_odt_table_with_merged_and_nested_cells(odt: Document) -> None:
    table = _one(odt, Category.TABLE, "SENT-ODT-NORTH")
    assert table.content["headers"] == ["Region", "Q1", "Q2"]
    assert table.content["rows"][1][:2] == ["SENT-ODT-MERGED both quarters", ""]
    assert table.metadata["merged_cells"] == ["A3:B3"]
    nested = _one(odt, Category.TABLE, "SENT-ODT-NESTED")
    assert table.content["nested_tables"] == [nested.element_id]
    assert table.content["rows"][1][2] == f"[table {nested.element_id}]"


def test_odt_frames_objects_code_and_page_furniture(odt: Document) -> None:
    image = _one(odt, Category.IMAGE, "logo")
    assert image.content == {
        "description": "Company logo",
        "mime_type": "image/png",
        "width": 96,
        "height": 48,
    }
    assert image.metadata["part"] == "Pictures/logo.png"
    assert _one(odt, Category.TEXT, "SENT-ODT-FRAME").metadata["source"] == "frame"
    assert _one(odt, Category.FORMULA, "a^2").content == {"expression": "a^2 + b^2 = c^2"}
    chart = _one(odt, Category.CHART, "Sales by quarter").content
    assert chart["chart_type"] == "column"
    assert chart["series"][0] == {
        "name": "Revenue",
        "categories": ["Q1", "Q2", "Q3"],
        "values": [10, 20, 30],
    }
    assert _one(odt, Category.CODE, "SELECT").content == {
        "text": "SELECT region, total\n  FROM sales;"
    }
    assert _one(odt, Category.SEPARATOR, "page_break").content == {"kind": "page_break"}
    for page in odt.pages:
        first, last = page.elements[0], page.elements[-1]
        assert (first.category, first.content["variant"]) == (Category.HEADER, "default")
        assert last.category is Category.FOOTER
        assert "SENT-ODT-FOOTER" in last.content["text"]


def test_odp_slides_titles_notes_and_comments(odp: Document) -> None:
    titles = ["SENT-ODP-TITLE Open deck", "Agenda", "Figures", "Slide 4"]
    assert [p.title for p in odp.pages] == titles
    first = odp.pages[0].elements
    assert [e.content.get("level") for e in first[:2]] == [1, 2]
    notes = [
        e.content["text"]
        for e in _all(odp, Category.ANNOTATION)
        if e.content["kind"] == "speaker_notes"
    ]
    assert notes == ["SENT-ODP-NOTES-1 Welcome everyone.", "SENT-ODP-NOTES-2 Keep it short."]
    comment = _one(odp, Category.ANNOTATION, "SENT-ODP-COMMENT").content
    assert (comment["kind"], comment["author"]) == ("comment", "Ann Critic")
    assert _one(odp, Category.FOOTER, "SENT-ODP-FOOTER").content["kind"] == "footer"
    assert odp.pages[3].metadata.get("hidden") is True


def test_odp_every_shape_kind(odp: Document) -> None:
    bullets = _one(odp, Category.LIST, "BULLET-1 Plan").content
    assert bullets["ordered"] is False
    assert [i["level"] for i in bullets["items"]] == [0, 1, 0]
    assert _one(odp, Category.LIST, "NUM-1").content["ordered"] is True
    assert _one(odp, Category.LINK, "deck").content["url"] == "https://example.org/deck"
    assert _one(odp, Category.IMAGE, "PICTURE").metadata["part"] == "Pictures/photo.png"
    assert _one(odp, Category.TABLE, "SENT-ODP-CELL").content["headers"] == ["Item", "Count"]
    assert _one(odp, Category.CHART, "Counts").content["chart_type"] == "column"
    assert _one(odp, Category.TEXT, "SENT-ODP-SHAPE").content["text"].endswith("on a shape")
    video = _one(odp, Category.VIDEO, "clip").content
    assert (video["name"], video["mime_type"], video["embedded"]) == ("clip.mp4", "video/mp4", True)


def test_odp_one_slide_alone(tmp_path: Path) -> None:
    path = odf.build_deck(tmp_path)
    extractor = for_path(path)
    assert extractor is not None
    assert extractor.extract_pages is not None
    with path.open("rb") as f:
        pages = extractor.extract_pages(f, [2], DEFAULT_LIMITS)
    assert [p.title for p in pages] == ["Figures"]
    with path.open("rb") as f:
        assert extractor.probe(f, DEFAULT_LIMITS).page_count == 4


def _zip(members: dict[str, str]) -> io.BytesIO:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    out.seek(0)
    return out


def test_an_odf_of_another_kind_is_named() -> None:
    f = _zip({"mimetype": "application/vnd.oasis.opendocument.spreadsheet", "content.xml": "<x/>"})
    with pytest.raises(UnsupportedError, match=r"OpenDocument spreadsheet renamed to \.odt"):
        precheck(f, ".odt", DEFAULT_LIMITS)


def test_an_encrypted_odf_is_encrypted() -> None:
    manifest = "<manifest:manifest><manifest:encryption-data/></manifest:manifest>"
    f = _zip(
        {"mimetype": "application/vnd.oasis.opendocument.text", "META-INF/manifest.xml": manifest}
    )
    with pytest.raises(EncryptedError, match="password-protected"):
        precheck(f, ".odt", DEFAULT_LIMITS)


@pytest.mark.corpus
def test_a_libreoffice_odt_of_the_corpus(corpus: Path, tmp_path: Path) -> None:
    """The corpus's LibreOffice Writer file (kept there renamed to .docx), under its own name."""
    path = tmp_path / "source.odt"
    path.write_bytes((corpus / "bad" / "samplefiles__source.odt-renamed.docx").read_bytes())
    doc = _read(path)
    texts = [e.content["text"] for e in _all(doc, Category.TEXT)]
    assert texts
    assert texts[0].startswith("Lorem ipsum dolor sit amet")


_ODT = "application/vnd.oasis.opendocument.text"


@pytest.mark.parametrize(
    ("members", "message"),
    [
        ({"mimetype": _ODT}, "no content.xml"),
        ({"mimetype": _ODT, "content.xml": "<office:document-content"}, "not well-formed"),
        (
            {"mimetype": _ODT, "content.xml": '<!DOCTYPE x [<!ENTITY a "b">]><x>&a;</x>'},
            "DOCTYPE",
        ),
        (
            {
                "mimetype": _ODT,
                "content.xml": '<office:document-content xmlns:office="urn:oasis:names:tc:'
                'opendocument:xmlns:office:1.0"><office:body/></office:document-content>',
            },
            "no office:text",
        ),
    ],
)
def test_a_broken_odt_is_corrupt_with_the_reason(
    tmp_path: Path, members: dict[str, str], message: str
) -> None:
    from dpe_server.isolation.jobs import Job, run_job

    (tmp_path / "bad.odt").write_bytes(_zip(members).getvalue())
    error = run_job(Job(str(tmp_path), "bad.odt", "extract"))["error"]
    assert error["kind"] == "corrupt"
    assert message in error["message"]


def test_plain_text_and_deck(tmp_path: Path) -> None:
    text_path, deck_path = odf.build_plain(tmp_path)
    text = _read(text_path)
    assert [p.title for p in text.pages] == ["Section 1"]
    assert text.properties.title is None
    assert not _all(text, Category.HEADING)
    romans = [i["label"] for e in _all(text, Category.LIST) for i in e.content["items"]]
    assert romans == ["i.", "ii.", "iii."]  # the second list continues the first
    assert _all(text, Category.LIST)[1].content["start"] == 3
    deck = _read(deck_path)
    assert [p.title for p in deck.pages] == ["Slide 1", "SENT-ODP-PLAIN-TITLE 第二页"]
    assert [e.category for e in deck.pages[0].elements] == [Category.IMAGE]


def test_odt_form_controls(odt: Document) -> None:
    form = _one(odt, Category.FORM, "SENT-ODT-FORM-name")
    assert form.metadata == {"source": "form", "form": "Survey"}
    fields = {f["name"]: f for f in form.content["fields"]}
    assert fields["SENT-ODT-FORM-name"]["value"] == "Ada"
    agree = fields["agree"]
    assert (agree["kind"], agree["checked"], agree["value"], agree["label"]) == (
        "checkbox",
        True,
        "yes",
        "I agree",
    )
    colour = fields["colour"]
    assert (colour["kind"], colour["options"], colour["value"]) == (
        "dropdown",
        ["Red", "Blue"],
        "Blue",
    )


def test_odp_master_page_footer_text(odp: Document) -> None:
    """The master's footer frame holds its own text: a footer on every slide but the one whose
    drawing-page style hides footers; its date frame holds only a field: nothing."""
    shown = [
        [e.metadata for e in p.elements if "SENT-ODP-MASTER-FOOTER" in str(e.content)]
        for p in odp.pages
    ]
    assert shown == [[{"master_page": "Default"}]] * 3 + [[]]
    assert not [e for e in _all(odp, Category.FOOTER) if e.content["kind"] == "date"]


def test_odp_form_controls(odp: Document) -> None:
    form = _one(odp, Category.FORM, "SENT-ODP-FORM-ok")
    assert form.metadata == {"source": "form", "form": "Poll"}
    assert form in odp.pages[2].elements
    (field,) = form.content["fields"]
    assert (field["kind"], field["checked"], field["label"]) == ("checkbox", True, "Looks right")


@pytest.mark.parametrize("suffix", [".docx", ".pptx", ".xlsx"])
def test_an_odf_under_an_ooxml_suffix_is_named(tmp_path: Path, suffix: str) -> None:
    path = odf.build_text(tmp_path)
    f = io.BytesIO(path.read_bytes())
    with pytest.raises(UnsupportedError, match=rf"OpenDocument text renamed to \{suffix}"):
        precheck(f, suffix, DEFAULT_LIMITS)


@pytest.mark.parametrize("build", [odf.build_text, odf.build_deck])
def test_a_text_over_the_character_cap_is_cut_and_flagged(
    tmp_path: Path, build: Callable[[Path], Path]
) -> None:
    """As a docx paragraph: a paragraph's text longer than `max_chars_per_page` is cut to it
    and its page (and the document) say `truncated`."""
    path = build(tmp_path)
    extractor = for_path(path)
    assert extractor is not None
    whole = _read(path)
    longest = max(len(str(e.content.get("text", ""))) for e in _all(whole, Category.TEXT))
    cap = longest - 3
    with path.open("rb") as f:
        doc = extractor.extract(f, dataclasses.replace(DEFAULT_LIMITS, max_chars_per_page=cap))
    assert doc.metadata.get("truncated") is True
    cut = [p for p in doc.pages if p.metadata.get("truncated")]
    assert cut
    assert max(len(str(e.content["text"])) for e in _all(doc, Category.TEXT)) <= cap
    assert not any(p.metadata.get("truncated") for p in whole.pages)
    assert "truncated" not in whole.metadata


# ---- flat XML OpenDocument (.fodt, .fodp) -----------------------------------------------


def _contents(doc: Document) -> list[tuple[str, object]]:
    return [(e.category.value, e.content) for p in doc.pages for e in p.elements]


def test_a_flat_text_reads_as_its_package(tmp_path: Path) -> None:
    """doc-flat.fodt is doc-open.odt's parts in one XML document, its picture inline and its
    formula and chart inline objects: the same pages, metadata and elements."""
    flat_path = flat_odf.build(tmp_path)[0]
    flat, package = _read(flat_path), _read(odf.build_text(tmp_path))
    assert file_type(flat_path) == "fodt"
    assert flat.properties == package.properties
    assert [p.title for p in flat.pages] == [p.title for p in package.pages]
    assert _contents(flat) == _contents(package)
    kinds = {e.category for e in _all(flat, Category.FORMULA) + _all(flat, Category.CHART)}
    assert kinds == {Category.FORMULA, Category.CHART}


def test_a_flat_deck_and_its_inline_picture(tmp_path: Path) -> None:
    deck_path = flat_odf.build(tmp_path)[1]
    deck = _read(deck_path)
    assert _contents(deck) == _contents(_read(odf.build_plain(tmp_path)[1]))
    (image,) = _all(deck, Category.IMAGE)
    fmt = format_of(deck_path)
    assert fmt is not None
    assert fmt.picture is not None
    with deck_path.open("rb") as f:
        data = fmt.picture(f, "fodp", image.metadata, 1_000_000)
    assert data == odf.plain_deck_parts()["Pictures/only.png"]


def test_flat_files_that_are_not_what_their_suffix_says(tmp_path: Path) -> None:
    deck = flat_odf.build(tmp_path)[1].read_bytes()
    with pytest.raises(UnsupportedError, match=r"flat XML OpenDocument presentation renamed"):
        precheck(io.BytesIO(deck), ".fodt", DEFAULT_LIMITS)
    with pytest.raises(CorruptError, match="nor a flat OpenDocument XML document"):
        precheck(io.BytesIO(b"<html><body>not a document</body></html>"), ".fodt", DEFAULT_LIMITS)
    doctype = deck.replace(b"?>", b'?><!DOCTYPE x [<!ENTITY e "e">]>', 1)
    with pytest.raises(CorruptError, match="DOCTYPE"):
        FlatDocument(io.BytesIO(doctype), "fodp", DEFAULT_LIMITS)
    small = dataclasses.replace(DEFAULT_LIMITS, max_part_bytes=len(deck) - 1)
    with pytest.raises(TooLargeError):
        FlatDocument(io.BytesIO(deck), "fodp", small)
    # An .odt package under a flat suffix is read as the package it is.
    package = odf.build_text(tmp_path).read_bytes()
    precheck(io.BytesIO(package), ".fodt", DEFAULT_LIMITS)


def test_odt_extraction_leaves_nothing_to_the_cyclic_collector(tmp_path: Path) -> None:
    """As for docx: the text's blocks (and the parsed content.xml) are freed when the
    extraction returns, not at the next full garbage collection (read once before, as there)."""
    path = odf.build_text(tmp_path)
    assert _read(path).pages
    with collector_paused():
        gc.collect()
        assert _read(path).pages
        assert gc.collect() == 0
