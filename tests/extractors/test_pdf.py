"""The pdf extractor on the built fixtures: the tree per page, properties, errors, limits."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pypdf import PdfReader, PdfWriter
from pypdf import errors as pypdf_errors
from pypdf.xmp import XmpInformation

from dpe_server.extractors import DEFAULT_LIMITS, Limits, for_suffix
from dpe_server.extractors.pdf import extract as pdf_mod
from dpe_server.extractors.pdf.open import translated
from dpe_server.extractors.registry import format_of
from dpe_server.model.errors import (
    CorruptError,
    EncryptedError,
    ExtractionError,
    TooLargeError,
    UnsupportedError,
)
from dpe_server.model.tree import Category, Document, Element, Page, parse_element_id


def load_builder() -> Any:
    """fixtures/builders/pdf.py."""
    from fixtures.builders import pdf

    return pdf


@pytest.fixture(scope="module")
def structure(fixture_dir: Path) -> Path:
    return fixture_dir / "pdf_structure.pdf"


@pytest.fixture(scope="module")
def doc(structure: Path) -> Document:
    with structure.open("rb") as f:
        return pdf_mod.extract(f, DEFAULT_LIMITS)


def _of(page: Page, category: Category) -> list[Element]:
    return [el for el in page.elements if el.category is category]


def _texts(page: Page, category: Category) -> list[str]:
    return [str(el.content["text"]) for el in _of(page, category)]


def test_registry_pdf_suffix_gives_extractor() -> None:
    extractor = for_suffix(".PDF")
    assert extractor is not None
    assert extractor.extract_pages is not None
    fmt = format_of("a.PDF")
    assert fmt is not None
    assert fmt.name == "pdf"


def test_probe_properties_from_info(structure: Path) -> None:
    with structure.open("rb") as f:
        props = pdf_mod.probe(f, DEFAULT_LIMITS)
    assert props.page_count == 5
    assert props.title == "PDFSENT Document Title"
    assert props.keywords == ("PDFSENT-alpha", "PDFSENT-beta")
    assert props.summary == "PDFSENT subject line"
    assert props.extra["author"] == "PDFSENT Author"


def test_probe_page_titles_from_outline(structure: Path) -> None:
    with structure.open("rb") as f:
        props = pdf_mod.probe(f, DEFAULT_LIMITS)
    assert props.page_titles is not None
    assert props.page_titles[:3] == (
        "PDFSENT Outline Introduction",
        "PDFSENT Outline Tables",
        "PDFSENT Outline Columns",
    )


def test_probe_extracts_no_text(structure: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("probe must not extract page text")

    monkeypatch.setattr(pdf_mod, "collect_page", boom)
    with structure.open("rb") as f:
        assert pdf_mod.probe(f, DEFAULT_LIMITS).page_count == 5


def test_probe_properties_from_xmp_when_no_info() -> None:
    writer = PdfWriter()
    writer.add_blank_page(200, 200)
    xmp = XmpInformation.create()
    xmp.dc_title = {"x-default": "XMP PDFSENT title"}
    xmp.dc_subject = ["xmp-one", "xmp-two"]
    xmp.dc_description = {"x-default": "XMP PDFSENT description"}
    writer.xmp_metadata = xmp
    buf = io.BytesIO()
    writer.write(buf)
    props = pdf_mod.probe(buf, DEFAULT_LIMITS)
    assert (props.title, props.keywords, props.summary) == (
        "XMP PDFSENT title",
        ("xmp-one", "xmp-two"),
        "XMP PDFSENT description",
    )


@pytest.mark.parametrize(
    ("index", "title"),
    [
        pytest.param(0, "PDFSENT Main Title", id="first-heading-before-outline"),
        pytest.param(2, "PDFSENT Two Column Page", id="first-heading-nested-outline"),
        pytest.param(3, "PDFSENT Form Section", id="first-heading"),
        pytest.param(4, "Page 5", id="fallback"),
    ],
)
def test_page_title_rule(doc: Document, index: int, title: str) -> None:
    assert doc.pages[index].title == title


def test_element_ids_name_their_page(doc: Document) -> None:
    for page in doc.pages:
        for el in page.elements:
            parts = parse_element_id(el.element_id)
            assert parts is not None
            assert parts.page_index == page.page_index
            assert parts.category is el.category
            assert len(el.summary) <= 120


def test_headings_levels_by_size(doc: Document) -> None:
    levels = {
        str(el.content["text"]): el.content["level"] for el in _of(doc.pages[0], Category.HEADING)
    }
    # ranks of the heading styles on the first two pages: 24 pt, 16 pt, 13 pt
    assert levels == {
        "PDFSENT Main Title": 1,
        "PDFSENT Section Lists": 2,
        "PDFSENT Section Code": 3,
    }


def test_paragraph_joins_hyphenated_lines(doc: Document) -> None:
    texts = _texts(doc.pages[0], Category.TEXT)
    first = next(t for t in texts if t.startswith("PDFSENT paragraph one"))
    assert "extraordinary word" in first
    assert first.endswith("It ends on this third line.")
    assert "PDFSENT paragraph two stands alone." in texts


def test_lists_bullets_nested_and_numbered(doc: Document) -> None:
    lists = _of(doc.pages[0], Category.LIST)
    assert [el.content["ordered"] for el in lists] == [False, True]
    assert lists[0].content["items"] == [
        {"text": "PDFSENT bullet one", "level": 0},
        {"text": "PDFSENT bullet two", "level": 0},
        {"text": "PDFSENT nested bullet", "level": 1},
    ]
    assert [i["text"] for i in lists[1].content["items"]] == [
        "PDFSENT first step",
        "PDFSENT second step",
    ]


def test_code_block_keeps_indentation(doc: Document) -> None:
    assert _texts(doc.pages[0], Category.CODE) == ["def pdfsent_code():\n    return 42"]


def test_links_external_and_internal(doc: Document) -> None:
    links = {str(el.content["text"]): dict(el.content) for el in _of(doc.pages[0], Category.LINK)}
    assert links["PDFSENT external link"]["url"] == "https://example.com/pdfsent"
    internal = links["PDFSENT internal link"]
    assert internal["url"] == "#page=3"
    assert internal["target_page"] == 2


@pytest.mark.parametrize("index", [0, 1, 2, 3])
def test_header_footer_removed_from_body(doc: Document, index: int) -> None:
    page = doc.pages[index]
    assert _texts(page, Category.HEADER) == ["PDFSENT Running Header"]
    assert _texts(page, Category.FOOTER) == [f"Page {index + 1}"]
    body = " ".join(
        str(el.content.get("text", ""))
        for el in page.elements
        if el.category in (Category.TEXT, Category.HEADING)
    )
    assert "Running Header" not in body
    assert not re.search(r"\bPage \d\b", body)


def test_whole_document_lays_out_each_pages_edge_lines_once(
    structure: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The edge lines built when a neighbour needs them serve the page itself (issue 17):
    one layout of a page's header and footer candidates, and the furniture still found."""
    calls: list[int] = []
    real = pdf_mod.edge_lines

    def counting(runs: Any, box: Any) -> Any:
        calls.append(len(runs))
        return real(runs, box)

    monkeypatch.setattr(pdf_mod, "edge_lines", counting)
    with structure.open("rb") as f:
        doc = pdf_mod.extract(f, DEFAULT_LIMITS)
    assert len(calls) == len(doc.pages)
    for index in range(4):
        assert _texts(doc.pages[index], Category.HEADER) == ["PDFSENT Running Header"]
        assert _texts(doc.pages[index], Category.FOOTER) == [f"Page {index + 1}"]


def test_ruled_table_cells(doc: Document) -> None:
    tables = _of(doc.pages[1], Category.TABLE)
    ruled = next(t for t in tables if t.metadata.get("ruled"))
    assert ruled.content["headers"] == ["Item", "Qty", "Price"]
    assert ruled.content["rows"] == [
        ["PDFSENT apple", "3", "1.50"],
        ["PDFSENT pear", "7", "2.25"],
        ["PDFSENT plum", "11", "0.75"],
    ]
    assert (ruled.content["total_rows"], ruled.content["total_columns"]) == (3, 3)


def test_aligned_table_headers_and_rows(doc: Document) -> None:
    aligned = next(t for t in _of(doc.pages[1], Category.TABLE) if not t.metadata.get("ruled"))
    assert aligned.content["headers"] == ["Region", "Sales", "Growth"]
    assert aligned.content["rows"][0] == ["PDFSENT North", "120", "5%"]
    assert aligned.content["total_rows"] == 3


def test_image_with_alt_text(doc: Document) -> None:
    (image,) = _of(doc.pages[1], Category.IMAGE)
    assert image.content == {
        "description": "PDFSENT chart alt text",
        "mime_type": "image/png",
        "width": 24,
        "height": 16,
    }
    assert image.metadata["xobject"] == "/ImPDFSENT"


def test_image_bytes_served_as_png(structure: Path, doc: Document) -> None:
    (image,) = _of(doc.pages[1], Category.IMAGE)
    with structure.open("rb") as f:
        found = pdf_mod.image_bytes(f, str(image.metadata["ref"]), 5 << 20)
    assert found is not None
    data, mime = found
    assert mime == "image/png"
    assert data.startswith(b"\x89PNG")


def test_image_bytes_over_cap_is_none(structure: Path, doc: Document) -> None:
    (image,) = _of(doc.pages[4], Category.IMAGE)
    with structure.open("rb") as f:
        assert pdf_mod.image_bytes(f, str(image.metadata["ref"]), 16) is None


def test_annotations_kinds_authors_no_popup(doc: Document) -> None:
    anns = {
        str(el.content["kind"]): dict(el.content) for el in _of(doc.pages[1], Category.ANNOTATION)
    }
    assert set(anns) == {"text", "freetext", "highlight", "stamp", "underline", "ink"}
    assert anns["text"] == {"text": "PDFSENT sticky note", "kind": "text", "author": "PDFSENT Ann"}
    assert anns["stamp"]["author"] == "PDFSENT Stamper"
    assert anns["highlight"]["anchor"] == "Region"


def test_annotation_replies_nest_under_the_annotation_they_answer(doc: Document) -> None:
    """/IRT answers are the thread of the annotation they answer, never annotations of their
    own; an answer to an answer joins the same thread, in order, with its author and date."""
    notes = [el.content for el in _of(doc.pages[1], Category.ANNOTATION)]
    assert not any("reply" in str(c["text"]) for c in notes if "replies" not in c)
    (underline,) = [c for c in notes if c["kind"] == "underline"]
    assert underline["replies"] == [
        {"text": "PDFSENT reply one", "author": "PDFSENT Bo", "date": "2024-01-02T03:04:07Z"},
        {
            "text": "PDFSENT reply two",
            "author": "PDFSENT Cy",
            "date": "2024-01-03T10:00:00+01:00",
        },
    ]


def test_annotation_reply_loops_and_missing_parents_stay_annotations() -> None:
    """An /IRT that points at itself, at another answer in a loop, or at nothing on the
    page leaves the annotation standing on its own (nothing lost, nothing hangs)."""
    from pypdf.generic import ArrayObject, DictionaryObject, NameObject, TextStringObject

    writer = PdfWriter()
    page = writer.add_blank_page(200, 200)
    notes = []
    for text in ("a", "b", "c"):
        note = DictionaryObject(
            {
                NameObject("/Type"): NameObject("/Annot"),
                NameObject("/Subtype"): NameObject("/Text"),
                NameObject("/Contents"): TextStringObject(text),
            }
        )
        writer._add_object(note)
        notes.append(note)
    notes[0][NameObject("/IRT")] = notes[1].indirect_reference
    notes[1][NameObject("/IRT")] = notes[0].indirect_reference
    notes[2][NameObject("/IRT")] = writer.pages[0].indirect_reference
    page[NameObject("/Annots")] = ArrayObject([n.indirect_reference for n in notes])
    out = io.BytesIO()
    writer.write(out)
    out.seek(0)
    tree = pdf_mod.extract(out, DEFAULT_LIMITS)
    texts = sorted(str(el.content["text"]) for el in _of(tree.pages[0], Category.ANNOTATION))
    assert texts == ["a", "b", "c"]


def test_media_annotations_audio_and_video(doc: Document) -> None:
    page = doc.pages[1]
    (video,) = _of(page, Category.VIDEO)
    (audio,) = _of(page, Category.AUDIO)
    assert video.content["name"] == "PDFSENT video clip"
    assert audio.content["name"] == "PDFSENT sound clip"
    assert audio.content["mime_type"].startswith("audio/")


def test_two_columns_read_left_then_right(doc: Document) -> None:
    page = doc.pages[2]
    texts = _texts(page, Category.TEXT)
    assert texts == [
        "PDFSENT left column starts here and keeps going with more words on the left side of"
        " the page until it ends.",
        "PDFSENT right column starts after the left one is finished and it is read second,"
        " from top to bottom.",
    ]
    assert page.elements[1].category is Category.HEADING


def test_form_fields(doc: Document) -> None:
    (form,) = _of(doc.pages[3], Category.FORM)
    fields = {f["name"]: f for f in form.content["fields"]}
    assert fields["pdfsent_name"] == {
        "name": "pdfsent_name",
        "type": "text",
        "value": "PDFSENT value",
        "label": "pdfsent_name",
        "kind": "text",
    }
    assert fields["pdfsent_agree"]["type"] == "checkbox"
    assert fields["pdfsent_agree"]["checked"] is True
    assert fields["pdfsent_agree"]["value"] == "Yes"
    assert fields["pdfsent_color"]["type"] == "radio"
    assert fields["pdfsent_color"]["value"] == "blue"
    assert fields["pdfsent_color"]["options"] == ["red", "blue"]
    assert fields["pdfsent_choice"]["options"] == ["alpha", "beta"]
    assert fields["pdfsent_choice"]["value"] == "beta"
    assert fields["pdfsent_choice"]["kind"] == "dropdown"
    assert fields["pdfsent_signature"]["type"] == "signature"
    assert "pdfsent_submit" not in fields


def test_widgets_push_button_and_signature(doc: Document) -> None:
    widgets = [dict(el.content) for el in _of(doc.pages[3], Category.WIDGET)]
    assert widgets == [
        {"kind": "push_button", "name": "pdfsent_submit", "text": "PDFSENT Submit"},
        {"kind": "signature", "name": "pdfsent_signature"},
    ]


def test_cjk_text_extracted(doc: Document) -> None:
    page = doc.pages[3]
    assert any("中文测试 PDFSENT 句子" in str(el.content.get("text", "")) for el in page.elements)


def test_page_without_text_layer(doc: Document) -> None:
    page = doc.pages[4]
    assert page.metadata["no_text_layer"] is True
    (image,) = page.elements
    assert image.category is Category.IMAGE
    assert image.content["description"] == pdf_mod.SCANNED
    assert "no text layer" in image.summary


def test_document_json_round_trip(doc: Document) -> None:
    assert Document.from_json(doc.to_json()) == doc


@pytest.mark.parametrize("index", [0, 1, 2, 3, 4])
def test_extract_pages_matches_whole_document(structure: Path, doc: Document, index: int) -> None:
    with structure.open("rb") as f:
        (page,) = pdf_mod.extract_pages(f, [index], DEFAULT_LIMITS)
    assert page == doc.pages[index]


def _pages_read(monkeypatch: pytest.MonkeyPatch, path: Path, index: int) -> tuple[list[int], Page]:
    """Page `index` read alone, and the pages whose content streams that read walked."""
    seen: list[int] = []
    real = pdf_mod._Doc.pdfium_page

    def spy(doc: Any, index: int) -> Any:
        seen.append(index)
        return real(doc, index)

    monkeypatch.setattr(pdf_mod._Doc, "pdfium_page", spy)
    with path.open("rb") as f:
        (page,) = pdf_mod.extract_pages(f, [index], DEFAULT_LIMITS)
    return sorted(seen), page


def test_a_plain_pdf_is_read_without_pypdf(tmp_path: Path) -> None:
    """A file with no outline, annotation, image or XMP is read by PDFium alone: pypdf, whose
    import costs as much as laying out tens of pages, is not imported (issue 17)."""
    path = load_builder().build_bench(tmp_path / "bench.pdf", pages=3)
    code = (
        "import sys\n"
        "from dpe_server.extractors import DEFAULT_LIMITS\n"
        "from dpe_server.extractors.pdf.extract import extract\n"
        f"with open({str(path)!r}, 'rb') as f:\n"
        "    doc = extract(f, DEFAULT_LIMITS)\n"
        "print(len(doc.pages), doc.pages[1].title, 'pypdf' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split("\n")[0] == "3 Chapter 2: benchmark page False"


@pytest.mark.parametrize(
    ("data", "images", "xmp"),
    [
        (b"<< /Type /XObject /Subtype /Image /Width 8 >>", True, False),
        (b"<</Subtype/Im#61ge>>", True, False),
        (b"/ProcSet [/PDF /Text /ImageB /ImageC /ImageI] /ImageMask", False, False),
        (b"<< /Type /Catalog /Metadata 7 0 R >>", False, True),
        (b"<< /Type /ObjStm /N 3 >>", False, True),
        (b"<< /Type /Catalog /Metadat#61 7 0 R >>", False, True),
        (b"<< /Type /Catalog /MetadataX 7 0 R >>", False, False),
    ],
)
def test_what_the_file_may_hold_however_names_are_written(
    data: bytes, images: bool, xmp: bool
) -> None:
    assert pdf_mod._scan(io.BytesIO(data), (pdf_mod._MAYBE_IMAGES, pdf_mod._MAYBE_XMP)) == [
        images,
        xmp,
    ]


def test_a_large_file_is_not_scanned(monkeypatch: pytest.MonkeyPatch) -> None:
    """Over `SCAN_MAX` bytes the file may hold anything: pypdf is asked, no probe reads it."""
    monkeypatch.setattr(pdf_mod, "SCAN_MAX", 16)
    patterns = (pdf_mod._MAYBE_IMAGES, pdf_mod._MAYBE_XMP)
    assert pdf_mod._scan(io.BytesIO(b"%PDF-1.4 nothing here"), patterns) == [True, True]
    assert pdf_mod._scan(io.BytesIO(b"%PDF-1.4"), patterns) == [False, False]


def test_extract_pages_reads_only_neighbours(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = load_builder().build_bench(tmp_path / "bench.pdf", pages=30)
    seen, page = _pages_read(monkeypatch, path, 15)
    # the page, its four neighbours, and (the page has a heading) the first two pages, which
    # give the document's heading styles
    assert seen == [0, 1, 13, 14, 15, 16, 17]
    assert page.title == "Chapter 16: benchmark page"


def test_page_without_heading_style_reads_no_sample_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reportlab.pdfgen import canvas

    path = tmp_path / "body.pdf"
    c = canvas.Canvas(str(path), invariant=1)
    for n in range(12):
        c.setFont("Helvetica", 10)
        for k in range(5):
            c.drawString(72, 700 - 14 * k, f"plain body line {k} of page {n} with enough words")
        c.showPage()
    c.save()
    seen, page = _pages_read(monkeypatch, path, 8)
    assert seen == [6, 7, 8, 9, 10]
    assert page.title == "Page 9"  # never a line of body text


def test_encrypted_needs_password(fixture_dir: Path) -> None:
    with (fixture_dir / "pdf_encrypted.pdf").open("rb") as f, pytest.raises(EncryptedError) as err:
        pdf_mod.extract(f, DEFAULT_LIMITS)
    assert err.value.message.startswith("This PDF needs a password to open")
    assert "--passwords FILE" in err.value.message
    with (fixture_dir / "pdf_encrypted.pdf").open("rb") as f, pytest.raises(EncryptedError):
        pdf_mod.probe(f, DEFAULT_LIMITS)


def test_owner_password_only_opens(fixture_dir: Path) -> None:
    with (fixture_dir / "pdf_owner_only.pdf").open("rb") as f:
        doc = pdf_mod.extract(f, DEFAULT_LIMITS)
    assert doc.pages[0].title == "PDFSENT Main Title"
    assert doc.properties.extra["encrypted"] is True


def test_aes_with_empty_user_password_opens(structure: Path) -> None:
    writer = PdfWriter(clone_from=PdfReader(structure))
    writer.encrypt(user_password="", owner_password="pdfsent-owner", algorithm="AES-256")
    buf = io.BytesIO()
    writer.write(buf)
    buf.seek(0)
    (page,) = pdf_mod.extract_pages(buf, [1], DEFAULT_LIMITS)
    assert any(el.category is Category.TABLE for el in page.elements)


@pytest.mark.parametrize(
    ("data", "transient"),
    [
        pytest.param(b"", True, id="empty"),
        pytest.param(b"PK\x03\x04 not a pdf at all", False, id="zip"),
        pytest.param(b"%PDF-1.7\n1 0 obj <<", True, id="truncated-header"),
    ],
)
def test_broken_input_is_corrupt(data: bytes, transient: bool) -> None:
    with pytest.raises(CorruptError) as err:
        pdf_mod.extract(io.BytesIO(data), DEFAULT_LIMITS)
    assert err.value.transient is transient


@pytest.mark.parametrize("fraction", [0.3, 0.5, 0.9])
def test_truncated_file_is_transient_corrupt(structure: Path, fraction: float) -> None:
    data = structure.read_bytes()
    with pytest.raises(CorruptError) as err:
        pdf_mod.extract(io.BytesIO(data[: int(len(data) * fraction)]), DEFAULT_LIMITS)
    assert err.value.transient


def test_max_pages_truncates_document(structure: Path) -> None:
    with structure.open("rb") as f:
        doc = pdf_mod.extract(f, Limits(max_pages=2))
    assert len(doc.pages) == 2
    assert doc.metadata["truncated"] is True


def test_max_chars_truncates_page(structure: Path) -> None:
    with structure.open("rb") as f:
        (page,) = pdf_mod.extract_pages(f, [0], Limits(max_chars_per_page=60))
    assert page.metadata["truncated"] is True
    assert sum(len(str(el.content.get("text", ""))) for el in page.elements) < 200


def test_max_elements_truncates_page(structure: Path) -> None:
    with structure.open("rb") as f:
        (page,) = pdf_mod.extract_pages(f, [0], Limits(max_elements_per_page=3))
    assert page.metadata["truncated"] is True
    assert len(page.elements) == 3


def test_extract_pages_skips_out_of_range(structure: Path) -> None:
    with structure.open("rb") as f:
        pages = pdf_mod.extract_pages(f, [4, 5, -1], DEFAULT_LIMITS)
    assert [p.page_index for p in pages] == [4]


@pytest.mark.parametrize(
    ("raised", "expected", "transient"),
    [
        pytest.param(
            pypdf_errors.FileNotDecryptedError("x"), EncryptedError, False, id="not-decrypted"
        ),
        pytest.param(pypdf_errors.LimitReachedError("x"), TooLargeError, False, id="limit"),
        pytest.param(MemoryError(), TooLargeError, False, id="memory"),
        pytest.param(pypdf_errors.DependencyError("x"), UnsupportedError, False, id="dependency"),
        pytest.param(pypdf_errors.PdfStreamError("x"), CorruptError, False, id="stream"),
        pytest.param(RecursionError(), CorruptError, False, id="recursion"),
        pytest.param(KeyError("/Root"), CorruptError, False, id="key"),
        pytest.param(ValueError("x"), CorruptError, False, id="value"),
    ],
)
def test_library_errors_translated(
    structure: Path, raised: BaseException, expected: type[Exception], transient: bool
) -> None:
    with structure.open("rb") as f, pytest.raises(expected) as err, translated(f):
        raise raised
    assert isinstance(err.value, ExtractionError)
    assert err.value.transient is transient
    assert "/" not in err.value.message


def test_one_broken_page_does_not_sink_the_document(
    structure: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = pdf_mod._Doc.pdfium_page

    def flaky(doc: Any, index: int) -> Any:
        if index == 2:
            raise pypdf_errors.PdfStreamError("broken content stream")
        return real(doc, index)

    monkeypatch.setattr(pdf_mod._Doc, "pdfium_page", flaky)
    with structure.open("rb") as f:
        doc = pdf_mod.extract(f, DEFAULT_LIMITS)
    assert doc.pages[2].metadata["error"]["kind"] == "corrupt"
    assert doc.pages[2].title == "Page 3"
    assert doc.pages[3].title == "PDFSENT Form Section"


def test_a_truncated_page_marks_the_document_truncated(structure: Path) -> None:
    with structure.open("rb") as f:
        doc = pdf_mod.extract(f, Limits(max_elements_per_page=3))
    assert any(p.metadata.get("truncated") for p in doc.pages)
    assert doc.metadata["truncated"] is True
    with structure.open("rb") as f:
        assert "truncated" not in pdf_mod.extract(f, Limits()).metadata
