"""Form fields and comment threads have one shape in every format (docs/content.md, issue 16):
a field's `label`, `kind`, `value` and `checked` mean the same in docx, pdf and xlsx, and a
comment's replies are nested under it in xlsx and pptx."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from lxml import etree
from reportlab.pdfgen import canvas

from dpe_server.extractors import DEFAULT_LIMITS
from dpe_server.extractors.docx.forms import legacy_field, sdt_field
from dpe_server.extractors.pdf import extract as pdf_mod
from dpe_server.extractors.pptx.extract import extract as pptx_extract
from dpe_server.model.content import problems
from dpe_server.model.tree import Category, Document
from dpe_server.views.render import render_element

_NS = (
    'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" '
    'xmlns:w14="http://schemas.microsoft.com/office/word/2010/wordml"'
)


def _xml(body: str) -> etree._Element:
    return etree.fromstring(body.replace("<X", f"<X {_NS}", 1))


def _form_md(fields: list[Any]) -> str:
    element = {"category": "form", "content": {"fields": fields}, "summary": "S", "uri": "u"}
    return render_element(element, markdown=True, full=False)


def test_docx_content_controls_checked_unchecked_and_text() -> None:
    def box(state: str) -> Any:
        return sdt_field(
            _xml(
                f'<X><w:alias w:val="Box {state}"/><w14:checkbox>'
                f'<w14:checked w14:val="{state}"/></w14:checkbox></X>'
            ),
            "☒" if state == "1" else "☐",
        )

    on, off = box("1"), box("0")
    text = sdt_field(_xml('<X><w:alias w:val="Name"/><w:text/></X>'), "Ann")
    assert on == {
        "name": "Box 1",
        "type": "checkbox",
        "value": "checked",
        "label": "Box 1",
        "kind": "checkbox",
        "title": "Box 1",
        "checked": True,
    }
    assert off is not None
    assert (off["value"], off["checked"], off["kind"]) == ("", False, "checkbox")
    assert text is not None
    assert (text["label"], text["kind"], text["value"]) == ("Name", "text", "Ann")
    assert "checked" not in text
    assert [problems(Category.FORM, {"fields": [f]}) for f in (on, off, text)] == [[], [], []]
    assert _form_md([on, off, text]) == "- [x] Box 1\n- [ ] Box 0\n- Name: Ann\n"


def test_docx_legacy_checkboxes_and_text_field() -> None:
    def box(checked: str) -> Any:
        ffdata = _xml(
            f'<X><w:name w:val="Agree"/><w:checkBox><w:checked w:val="{checked}"/></w:checkBox></X>'
        )
        return legacy_field("FORMCHECKBOX", ffdata, "")

    on, off = box("1"), box("0")
    text = legacy_field("FORMTEXT", _xml('<X><w:name w:val="City"/></X>'), "Paris")
    assert (on["kind"], on["checked"], on["value"]) == ("checkbox", True, "checked")
    assert (off["kind"], off["checked"], off["value"]) == ("checkbox", False, "")
    assert (text["label"], text["kind"], text["value"]) == ("City", "text", "Paris")
    assert [problems(Category.FORM, {"fields": [f]}) for f in (on, off, text)] == [[], [], []]


def _pdf_with_form() -> bytes:
    out = io.BytesIO()
    c = canvas.Canvas(out)
    form = c.acroForm
    form.textfield(name="city", tooltip="Your city", value="Paris", x=100, y=700, width=150)
    form.checkbox(name="agree", checked=True, x=100, y=650, size=14)
    form.checkbox(name="spam", checked=False, x=100, y=620, size=14)
    form.radio(name="size", value="small", selected=False, x=100, y=590, size=14)
    form.radio(name="size", value="large", selected=True, x=130, y=590, size=14)
    c.showPage()
    c.save()
    return out.getvalue()


def test_pdf_checked_and_unchecked_boxes_a_radio_group_and_a_text_field() -> None:
    page = pdf_mod.extract_pages(io.BytesIO(_pdf_with_form()), [0], DEFAULT_LIMITS)[0]
    (form,) = [e for e in page.elements if e.category is Category.FORM]
    fields = {f["name"]: f for f in form.content["fields"]}
    assert {k: fields["city"][k] for k in ("label", "kind", "value")} == {
        "label": "Your city",
        "kind": "text",
        "value": "Paris",
    }
    assert "checked" not in fields["city"]
    assert (fields["agree"]["checked"], fields["agree"]["value"]) == (True, "Yes")
    assert (fields["spam"]["checked"], fields["spam"]["value"]) == (False, "")
    assert (fields["size"]["kind"], fields["size"]["checked"], fields["size"]["value"]) == (
        "radio",
        True,
        "large",
    )
    assert problems(Category.FORM, form.content) == []
    md = _form_md(form.content["fields"])
    assert "- Your city (city): Paris\n" in md
    assert "- [x] agree" in md
    assert "- [ ] spam" in md


def _only(doc: Document, category: Category) -> list[dict[str, Any]]:
    return [dict(e.content) for p in doc.pages for e in p.elements if e.category is category]


def test_xlsx_validations_say_their_kind(fixture_dir: Path) -> None:
    from dpe_server.extractors.xlsx.extract import extract as xlsx_extract

    with (fixture_dir / "xlsx-constructs.xlsx").open("rb") as f:
        doc = xlsx_extract(f, DEFAULT_LIMITS)
    fields = [f for c in _only(doc, Category.FORM) for f in c["fields"]]
    kinds = {f["name"]: (f["type"], f["kind"], f["label"]) for f in fields}
    assert kinds["G4:G8"] == ("list", "dropdown", "G4:G8")
    assert kinds["B4:C8"] == ("whole", "number", "B4:C8")


def test_pptx_modern_comment_replies_are_nested_under_their_comment(fixture_dir: Path) -> None:
    with (fixture_dir / "deck-everything.pptx").open("rb") as f:
        doc = pptx_extract(f, DEFAULT_LIMITS)
    comments = [c for c in _only(doc, Category.ANNOTATION) if c["kind"] == "comment"]
    assert all("in_reply_to" not in c for c in comments)
    (thread,) = [c for c in comments if c.get("replies")]
    assert thread["text"] == "Modern SENT_MODERN_COMMENT"
    assert thread["date"] == "2024-01-02T03:04:05.000"
    assert thread["replies"] == [
        {
            "text": "Reply SENT_MODERN_REPLY",
            "author": "Cy SENT_MODERN_AUTHOR",
            "date": "2024-01-02T03:04:07.000",
        }
    ]
    assert not [c["text"] for c in comments if c["text"] == "Reply SENT_MODERN_REPLY"]
    assert problems(Category.ANNOTATION, thread) == []
