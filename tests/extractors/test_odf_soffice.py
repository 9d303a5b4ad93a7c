"""OpenDocument as LibreOffice writes it: the files fixtures/exported/soffice_odf.py made of
deck-everything.pptx, doc-everything.docx and deck-open.odp, read as their sources are
(issue 18). What LibreOffice itself drops on the way (SmartArt text, OMML formulas, the form
widget, modern comment replies) is listed in that script and not asserted here."""

from __future__ import annotations

import io
import re
import zipfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from dpe_server.extractors import DEFAULT_LIMITS, for_path
from dpe_server.model.tree import Category, Document, Element

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
EXPORTED = FIXTURES / "exported"


def _read(path: Path, data: bytes | None = None) -> Document:
    extractor = for_path(path)
    assert extractor is not None
    return extractor.extract(io.BytesIO(data or path.read_bytes()), DEFAULT_LIMITS)


@pytest.fixture(scope="module")
def odp() -> Document:
    return _read(EXPORTED / "deck-everything-soffice.odp")


@pytest.fixture(scope="module")
def odt() -> Document:
    return _read(EXPORTED / "doc-everything-soffice.odt")


def _of(doc: Document, page: int, category: Category) -> list[Element]:
    return [e for e in doc.pages[page].elements if e.category is category]


def test_slide_comments_written_as_officeooo_annotation(odp: Document) -> None:
    comments = [dict(e.content) for e in _of(odp, 8, Category.ANNOTATION)]
    assert comments == [
        {
            "text": "Check this SENT_COMMENT_A",
            "kind": "comment",
            "author": "Ada SENT_AUTHOR_A",
            "date": "2024-01-02T03:04:05",
        },
        {
            "text": "Agreed SENT_COMMENT_B",
            "kind": "comment",
            "author": "Bob SENT_AUTHOR_B",
            "date": "2024-01-02T03:04:06",
        },
    ]


def test_flat_deck_comments_and_notes_in_a_frame_without_class() -> None:
    path = EXPORTED / "deck-open-soffice.fodp"
    xml = path.read_bytes()
    assert b"<officeooo:annotation" in xml
    assert b'presentation:class="notes"' not in xml.split(b"SENT-ODP-NOTES-1")[0][-600:]
    doc = _read(path)
    notes = [e.content for e in _of(doc, 0, Category.ANNOTATION)]
    assert notes == [{"text": "SENT-ODP-NOTES-1 Welcome everyone.", "kind": "speaker_notes"}]
    comment = _of(doc, 1, Category.ANNOTATION)[0].content
    assert comment["kind"] == "comment"
    assert comment["author"] == "Ann Critic"
    assert comment["text"] == "SENT-ODP-COMMENT Shorten this."


def test_notes_page_furniture_is_not_notes(odp: Document) -> None:
    (notes,) = [e for e in _of(odp, 1, Category.ANNOTATION)]
    assert notes.content == {"text": "Notes SENT_NOTES_1", "kind": "speaker_notes"}


def test_footer_date_and_slide_number_on_the_slide(odp: Document) -> None:
    footers = [(e.content["kind"], e.content["text"]) for e in _of(odp, 1, Category.FOOTER)]
    assert footers == [
        ("date", "2024-01-02 SENT_DATE"),
        ("footer", "Confidential SENT_FOOTER"),
        ("slide_number", "2"),
    ]
    texts = [e.content["text"] for e in _of(odp, 1, Category.TEXT)]
    assert "2024-01-02 SENT_DATE" not in texts
    assert _of(odp, 2, Category.FOOTER) == []  # its drawing-page style shows no furniture


def test_click_actions_and_slide_links(odp: Document) -> None:
    links = [(e.content, e.metadata) for e in _of(odp, 6, Category.LINK)]
    assert links == [
        (
            {"text": "Visit SENT_ACTION", "url": "https://example.com/SENT_ACTION_URL"},
            {"kind": "click_action"},
        ),
        (
            {"text": "Back to start SENT_BACK", "url": "#slide=1", "target_page": 0},
            {"kind": "click_action"},
        ),
    ]
    jump = _of(odp, 1, Category.LINK)[1]
    assert jump.content == {"text": "the table SENT_JUMP", "url": "#slide=3", "target_page": 2}


def test_media_plugins_are_video_and_audio(odp: Document) -> None:
    assert _of(odp, 6, Category.IMAGE) == []
    (video,) = _of(odp, 6, Category.VIDEO)
    assert video.content == {
        "name": "media1.mp4",
        "mime_type": "video/mp4",
        "embedded": True,
        "description": "clip SENT_VIDEO.mp4",
    }
    assert video.metadata["part"] == "ppt/media/media1.mp4"
    (audio,) = _of(odp, 6, Category.AUDIO)
    assert audio.content == {
        "name": "SENT_AUDIO.mp3",
        "mime_type": "audio/mpeg",
        "url": "https://example.com/SENT_AUDIO.mp3",
        "description": "Theme tune SENT_AUDIO_ALT",
    }


def test_list_going_deeper_and_code_in_a_monospace_font(odp: Document) -> None:
    bullets, numbered = (e.content for e in _of(odp, 1, Category.LIST))
    assert [(i["text"], i["level"]) for i in bullets["items"]] == [
        ("First point SENT_BULLET_A", 0),
        ("Detail SENT_BULLET_A1", 1),
        ("Second point SENT_BULLET_B", 0),
    ]
    assert numbered["ordered"] is True
    (code,) = _of(odp, 1, Category.CODE)
    assert code.content == {"text": "def sentinel():\n    return 'SENT_CODE'"}


def test_connector_diagram(odp: Document) -> None:
    (diagram,) = _of(odp, 5, Category.DIAGRAM)
    assert diagram.content["kind"] == "connector"
    assert diagram.content["nodes"] == ["Start SENT_CXN_A", "Finish SENT_CXN_B"]
    assert diagram.content["edges"] == [[0, 1]]


def test_deck_categories_match_the_pptx_but_what_libreoffice_drops(odp: Document) -> None:
    pptx = _read(FIXTURES / "deck-everything.pptx")
    dropped = {5: [Category.DIAGRAM], 7: [Category.FORMULA, Category.WIDGET]}
    dropped[9] = [Category.ANNOTATION]  # the modern comment (and its reply)
    assert [p.title for p in odp.pages] == [p.title for p in pptx.pages]
    for i, (mine, theirs) in enumerate(zip(odp.pages, pptx.pages, strict=True)):
        want = Counter(e.category for e in theirs.elements)
        want.subtract(dropped.get(i, []))
        got = Counter(e.category for e in mine.elements)
        assert +got == +want, i


def test_text_code_headings_shapes_comments_breaks_rules(odt: Document) -> None:
    code = [e.content["text"] for e in _of(odt, 1, Category.CODE)]
    assert code == ["def sent_code():\n    return 'SENT-CODE'\nprint('SENT-MONO')"]
    headings = {e.content["text"]: e.content["level"] for e in _of(odt, 1, Category.HEADING)}
    assert headings["SENT-LOCALIZED-H3"] == 3  # a `Heading 3` paragraph without outline level
    boxes = [e.content["text"] for e in _of(odt, 1, Category.TEXT) if e.metadata.get("source")]
    assert boxes == ["SENT-TEXTBOX inside", "SENT-VML-TEXTBOX"]
    assert "Shape follows" in [e.content["text"] for e in _of(odt, 1, Category.TEXT)]
    notes = [e.content for e in _of(odt, 2, Category.ANNOTATION)]
    comments = [c for c in notes if c["kind"] == "comment"]
    assert [c.get("resolved", False) for c in comments] == [False, False, True]
    kinds = [e.content["kind"] for e in _of(odt, 2, Category.SEPARATOR)]
    assert kinds == ["page_break", "column_break", "rule", "rule", "section_break"]
    sources = [e.metadata.get("source") for e in _of(odt, 2, Category.SEPARATOR)]
    assert sources[2:4] == ["paragraph_border", None]  # a bordered empty paragraph, a line


def test_text_sections_from_master_pages_as_the_docx(odt: Document) -> None:
    docx = _read(FIXTURES / "doc-everything.docx")
    assert [p.title for p in odt.pages] == [p.title for p in docx.pages]
    assert [p.metadata["section"] for p in odt.pages] == [1, 1, 1, 2, 2]

    def furniture(doc: Document, page: int) -> list[tuple[str, object, object]]:
        cats = (Category.HEADER, Category.FOOTER)
        return [
            (e.category.value, e.content["variant"], e.content["text"])
            for e in doc.pages[page].elements
            if e.category in cats
        ]

    for page in (0, 3):
        assert furniture(odt, page) == furniture(docx, page), page
    assert ("header", "default", "SENT-HEADER-TWO") in furniture(odt, 3)


def test_text_form_fields_and_content_controls(odt: Document) -> None:
    forms = [(e.metadata["source"], e.content["fields"][0]) for e in _of(odt, 2, Category.FORM)]
    legacy = [f for source, f in forms if source == "legacy_form_field"]
    assert [(f["kind"], f["value"]) for f in legacy] == [
        ("text", "SENT-FORMVALUE"),
        ("checkbox", "checked"),
        ("dropdown", "SENT-GREEN"),
    ]
    assert legacy[0]["name"] == "SENTText1"
    assert legacy[2]["options"] == ["Red", "SENT-GREEN"]
    controls = [f for source, f in forms if source == "content_control"]
    assert [(f["type"], f["value"]) for f in controls] == [
        ("plain_text", "SENT-SDT-PLAIN"),
        ("dropdown", "SENT-TWO"),
        ("date", "2/3/2024"),
        ("checkbox", "checked"),
    ]
    assert controls[1]["options"] == ["One", "SENT-TWO"]
    assert controls[2]["date"] == "2024-02-03T00:00:00Z"
    texts = [e.content["text"] for e in _of(odt, 2, Category.TEXT)]
    assert "Name: SENT-FORMVALUE Agree: ☒ Colour: SENT-GREEN" in texts  # as the docx reads


def _with_content(path: Path, edit: Callable[[bytes], bytes]) -> bytes:
    """The package at `path` with its content.xml edited."""
    out = io.BytesIO()
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            dst.writestr(info, edit(data) if info.filename == "content.xml" else data)
    return out.getvalue()


def test_replies_threaded_by_parent_name() -> None:
    """LibreOffice 7.4 writes Word's replies as comments of their own (as in the committed
    file); later versions name the comment answered (`loext:parent-name`): given that, the
    replies go under their comment as the docx reader nests Word's."""
    path = EXPORTED / "doc-everything-soffice.odt"

    def link(xml: bytes) -> bytes:
        names = re.findall(rb'office:name="(__Annotation__\d+_\d+)"', xml)
        reply_two, reply_one, root = names[:3]
        for reply in (reply_one, reply_two):
            xml = xml.replace(
                b'office:name="' + reply + b'"',
                b'office:name="' + reply + b'" loext:parent-name="' + root + b'"',
                1,
            )
        return xml

    doc = _read(path, _with_content(path, link))
    (comment,) = [
        e.content for e in _of(doc, 2, Category.ANNOTATION) if e.content["kind"] == "comment"
    ]
    assert comment["text"] == "SENT-COMMENT body"
    assert comment["resolved"] is True
    assert comment["replies"] == [  # by date, as the docx reader gives them
        {"text": "SENT-REPLY one", "author": "SENT Replier", "date": "2024-01-02T09:30:00"},
        {"text": "SENT-REPLY two", "author": "SENT Reviewer", "date": "2024-01-03T10:00:00"},
    ]


@pytest.mark.parametrize(
    "name", ["deck-everything-soffice.odp", "doc-everything-soffice.odt", "deck-open-soffice.fodp"]
)
def test_one_page_read_matches_the_whole_document(name: str) -> None:
    path = EXPORTED / name
    whole = _read(path)
    extractor = for_path(path)
    assert extractor is not None
    for page in whole.pages:
        (alone,) = extractor.extract_pages(
            io.BytesIO(path.read_bytes()), [page.page_index], DEFAULT_LIMITS
        )
        assert alone == page
