"""E-mail (issue 35): .eml, .msg and .mbox read one page per message, their header fields
the page's metadata, the body as elements (through a registered HTML reader when there is
one), calendars as text, inline pictures as images served from the message, and each
attachment a link the catalog serves as a document of its own (tests/test_children.py)."""

from __future__ import annotations

import io
import shutil
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path
from typing import BinaryIO

import pytest

from dpe_server.extractors import FORMATS, Extractor, Format, Limits, register
from dpe_server.isolation.client import InlineJobs, run_inline
from dpe_server.model.errors import CorruptError, ExtractionError, UnsupportedError
from dpe_server.model.tree import Category, Document, Page, PageBuilder, Properties
from fixtures.builders import cfb, mail


def extract(root: Path, rel: str) -> Document:
    return run_inline(InlineJobs().extract(root, rel))


def elements(page: Page, category: Category) -> list[dict[str, object]]:
    return [
        dict(e.content) | {"_meta": e.metadata} for e in page.elements if e.category is category
    ]


def test_eml_header_body_calendar_picture_and_attachment(fixture_dir: Path) -> None:
    doc = extract(fixture_dir, mail.EML)
    assert doc.properties.title == "Q3 figures (MAIL-SUBJECT-SENTINEL)"
    (page,) = doc.pages
    assert page.metadata == {
        "from": "Alice Example <alice@example.com>",
        "to": "Bob Example <bob@example.com>",
        "cc": "Carol Example <carol@example.com>",
        "date": mail.DATE,
        "subject": "Q3 figures (MAIL-SUBJECT-SENTINEL)",
    }
    texts = [str(t["text"]) for t in elements(page, Category.TEXT)]
    assert any("MAIL-HTML-SENTINEL" in t for t in texts)  # the HTML part, by the html format
    assert not any("MAIL-PLAIN-SENTINEL" in t for t in texts)
    assert any("SUMMARY:MAIL-CAL-SENTINEL review" in t for t in texts)
    (image,) = elements(page, Category.IMAGE)
    assert image["mime_type"] == "image/png"
    assert image["_meta"] == {"part": "inline/logo.png"}
    (link,) = elements(page, Category.LINK)
    assert link["kind"] == "attachment"
    assert link["name"] == "q3.xlsx"
    assert link["size"] == len(mail.Q3)
    assert str(link["mime_type"]).endswith(".sheet")
    assert doc.metadata["children"] == [
        {
            "path": "attachments/q3.xlsx",
            "name": "q3.xlsx",
            "mime_type": link["mime_type"],
            "size": len(mail.Q3),
        }
    ]


def test_eml_inline_picture_is_served_from_the_message(fixture_dir: Path) -> None:
    found = run_inline(InlineJobs().image(fixture_dir, mail.EML, {"part": "inline/logo.png"}))
    assert found is not None
    assert found[1] == "image/png"


def test_an_attachment_is_read_as_its_own_kind(fixture_dir: Path) -> None:
    doc = extract(fixture_dir, f"{mail.EML}\0attachments/q3.xlsx")
    (table,) = [e for p in doc.pages for e in p.elements if e.category is Category.TABLE]
    assert table.content["rows"] == [["MAIL-XLSX-SENTINEL", "1200"]]


def test_msg_header_body_and_attachment(fixture_dir: Path) -> None:
    doc = extract(fixture_dir, mail.MSG)
    (page,) = doc.pages
    assert page.metadata == {
        "from": "Alice Example <alice@example.com>",
        "to": "Bob Example",
        "cc": "Carol Example",
        "date": "Tue, 02 Jan 2024 09:30:00 +0000",  # the submit time: no transport headers
        "subject": "Quarterly report (MSG-SUBJECT-SENTINEL)",
    }
    assert [t["text"] for t in elements(page, Category.TEXT)][1:] == [
        "MSG-BODY-SENTINEL",
        "The report is attached.",
    ]
    (link,) = elements(page, Category.LINK)
    assert (link["name"], link["size"]) == ("report.docx", len(mail.REPORT))
    child = extract(fixture_dir, f"{mail.MSG}\0attachments/report.docx")
    assert child.pages[0].elements[0].content["text"] == "MSG-DOCX-SENTINEL"


def test_mbox_one_page_per_message_from_lines_unquoted(fixture_dir: Path) -> None:
    doc = extract(fixture_dir, mail.MBOX)
    assert [p.title for p in doc.pages] == ["MBOX-FIRST-SENTINEL", "Re: MBOX-FIRST-SENTINEL"]
    last = str(doc.pages[1].elements[-1].content["text"])
    assert "MBOX-SECOND-SENTINEL" in last
    assert "\nFrom the first message" in last
    assert ">From" not in last


def _eml(tmp_path: Path, html: str, plain: str | None = None) -> Path:
    msg = EmailMessage()
    msg["Subject"] = "HTML only"
    if plain is not None:
        msg.set_content(plain)
        msg.add_alternative(html, subtype="html")
    else:
        msg.set_content(html, subtype="html")
    path = tmp_path / "page.eml"
    path.write_bytes(bytes(msg))
    return path


def test_eml_html_only_body_read_as_its_text(tmp_path: Path, without_html: None) -> None:
    """With no html format registered, an HTML-only body is read by the package's own lxml
    text extraction: its text, no markup, nothing hidden."""
    html = (
        "<html><head><style>p{color:red}</style><script>var x='HIDDEN';</script></head>"
        "<body><h1>Title</h1><p>First <b>para</b>graph.</p><div>Second<br>line</div></body></html>"
    )
    page = extract(tmp_path, _eml(tmp_path, html).name).pages[0]
    assert [t["text"] for t in elements(page, Category.TEXT)] == [
        "Title",
        "First paragraph.",
        "Second",
        "line",
    ]


def _html_extract(f: BinaryIO, limits: Limits) -> Document:
    b = PageBuilder(0)
    b.add(Category.HEADING, "read by html", {"level": 1, "text": f.read().decode()[:20]})
    return Document(Properties(1), (b.build("html"),))


HTML_EXTRACTOR = Extractor(lambda f, limits: Properties(1), _html_extract)


@pytest.fixture
def without_html() -> Iterator[None]:
    """No `html` format registered, for the test."""
    before = dict(FORMATS)
    FORMATS.pop(".html", None)
    yield
    FORMATS.clear()
    FORMATS.update(before)


@pytest.fixture
def html_format() -> Iterator[None]:
    """An `html` format registered for the test (another issue adds the real one)."""
    before = dict(FORMATS)
    register(Format("html", (".html",), "a web page", "page", False, f"{__name__}:HTML_EXTRACTOR"))
    yield
    FORMATS.clear()
    FORMATS.update(before)


@pytest.mark.usefixtures("html_format")
def test_eml_html_body_goes_through_the_registered_html_reader(tmp_path: Path) -> None:
    path = _eml(tmp_path, "<p>rich</p>", plain="poor")
    page = extract(tmp_path, path.name).pages[0]
    (heading,) = [e for e in page.elements if e.category is Category.HEADING][1:]
    assert heading.summary == "read by html"
    assert heading.content["text"] == "<p>rich</p>\n"
    assert not any("poor" in str(e.content) for e in page.elements)


def test_a_compound_file_that_is_no_message_is_corrupt(tmp_path: Path) -> None:
    (tmp_path / "x.msg").write_bytes(cfb.write({"WordDocument": b"x" * 100}))
    with pytest.raises(CorruptError, match="not an Outlook message"):
        extract(tmp_path, "x.msg")


def test_a_zip_named_eml_is_unsupported(tmp_path: Path, fixture_dir: Path) -> None:
    shutil.copyfile(fixture_dir / "doc-plain.docx", tmp_path / "x.eml")
    with pytest.raises(UnsupportedError, match=r"zip archive renamed to \.eml"):
        extract(tmp_path, "x.eml")


def test_a_missing_attachment_is_an_error_of_that_child(fixture_dir: Path) -> None:
    with pytest.raises(ExtractionError, match=r"no longer holds attachments/gone\.xlsx"):
        extract(fixture_dir, f"{mail.EML}\0attachments/gone.xlsx")


def test_attachment_names_lose_folders_and_are_made_unique(tmp_path: Path) -> None:
    msg = EmailMessage()
    msg["Subject"] = "twice"
    msg.set_content("body")
    for name in ("../../etc/a.docx", "a.docx", ""):
        msg.add_attachment(b"x", "application", "octet-stream", filename=name or None)
    (tmp_path / "m.eml").write_bytes(bytes(msg))
    doc = extract(tmp_path, "m.eml")
    paths = [c["path"] for c in doc.metadata["children"]]  # type: ignore[union-attr,index]
    assert paths == ["attachments/a.docx", "attachments/a (2).docx", "attachments/part-3"]


def test_corpus_email_with_attachments(corpus: Path) -> None:
    folder = corpus / "email"
    if not folder.is_dir():
        pytest.skip("no e-mail corpus")
    for path in sorted(folder.iterdir()):
        doc = extract(folder, path.name)
        assert doc.pages, path.name
        assert doc.properties.title, path.name
        if "attachment" in path.name:
            assert doc.metadata.get("children"), path.name


def test_bytes_io_of_an_eml_reads_as_the_file(fixture_dir: Path) -> None:
    """The extractor reads any binary file object (a child's bytes are one)."""
    fmt = FORMATS[".eml"]
    data = (fixture_dir / mail.EML).read_bytes()
    assert fmt.load().extract(io.BytesIO(data), Limits()) == extract(fixture_dir, mail.EML)


def test_an_outlook_message_attached_whole_is_a_page_of_its_own(tmp_path: Path) -> None:
    inner = "__attach_version1.0_#00000000/__substg1.0_3701000D/"
    data = cfb.write(
        {
            "__properties_version1.0": bytes(32),
            "__substg1.0_0037001F": "Fw: thread".encode("utf-16-le"),
            "__substg1.0_1000001F": "See below.".encode("utf-16-le"),
            "__attach_version1.0_#00000000/__properties_version1.0": bytes(8),
            f"{inner}__properties_version1.0": bytes(24),
            f"{inner}__substg1.0_0037001F": "THREAD-INNER-SENTINEL".encode("utf-16-le"),
            f"{inner}__substg1.0_0C1A001F": "Dana".encode("utf-16-le"),
            f"{inner}__substg1.0_1000001F": "The first message.".encode("utf-16-le"),
        }
    )
    (tmp_path / "thread.msg").write_bytes(data)
    doc = extract(tmp_path, "thread.msg")
    assert [p.title for p in doc.pages] == ["Fw: thread", "THREAD-INNER-SENTINEL"]
    assert doc.pages[1].metadata == {"from": "Dana", "subject": "THREAD-INNER-SENTINEL"}
    assert "children" not in doc.metadata
