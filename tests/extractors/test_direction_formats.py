"""`direction: "rtl"` in the OpenDocument and sheet readers, by the one rule every format uses
(`model.direction`): right-to-left headings, paragraphs, list items, text frames, slide titles
and sheet cells say so; left-to-right and CJK text says nothing."""

from __future__ import annotations

import zipfile
from pathlib import Path

from dpe_server.extractors import DEFAULT_LIMITS, for_path
from dpe_server.model.tree import Category, Document

_NS = (
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
    'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
    'xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0" '
    'xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0"'
)
HEBREW = "שלום עולם ומלואו"
ARABIC = "مرحبا بالعالم كله"


def _read(path: Path) -> Document:
    extractor = for_path(path)
    assert extractor is not None
    with path.open("rb") as f:
        return extractor.extract(f, DEFAULT_LIMITS)


def _odf(path: Path, mimetype: str, body: str) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("mimetype", mimetype)
        z.writestr(
            "content.xml",
            f'<office:document-content {_NS} office:version="1.3"><office:body>{body}'
            "</office:body></office:document-content>",
        )
    return path


def _directions(doc: Document) -> dict[str, object]:
    out: dict[str, object] = {}
    for page in doc.pages:
        for e in page.elements:
            if e.category is Category.LIST:
                for item in e.content["items"]:
                    out[item["text"]] = item.get("direction")
            elif "text" in e.content:
                out[e.content["text"]] = e.content.get("direction")
    return out


def test_odt_headings_paragraphs_list_items_and_frames(tmp_path: Path) -> None:
    body = (
        f'<office:text><text:h text:outline-level="1">{HEBREW}</text:h>'
        f"<text:p>{ARABIC} Python</text:p>"
        "<text:p>An English paragraph naming שלום once.</text:p>"
        f"<text:list><text:list-item><text:p>{HEBREW} א</text:p></text:list-item>"
        "<text:list-item><text:p>English item</text:p></text:list-item></text:list>"
        "<text:p>第一章 中文段落</text:p>"
        '<text:p><draw:frame svg:width="5cm" svg:height="2cm"><draw:text-box>'
        f"<text:p>{ARABIC} في إطار</text:p></draw:text-box></draw:frame></text:p>"
        "</office:text>"
    )
    doc = _read(_odf(tmp_path / "rtl.odt", "application/vnd.oasis.opendocument.text", body))
    directions = _directions(doc)
    assert directions[HEBREW] == "rtl"
    assert directions[f"{ARABIC} Python"] == "rtl"
    assert directions["An English paragraph naming שלום once."] is None
    assert directions[f"{HEBREW} א"] == "rtl"
    assert directions["English item"] is None
    assert directions["第一章 中文段落"] is None
    assert directions[f"{ARABIC} في إطار"] == "rtl"


def test_odp_slide_title(tmp_path: Path) -> None:
    body = (
        '<office:presentation><draw:page draw:name="s1">'
        '<draw:frame presentation:class="title"><draw:text-box>'
        f"<text:p>{HEBREW}</text:p></draw:text-box></draw:frame>"
        '<draw:frame presentation:class="subtitle"><draw:text-box>'
        "<text:p>An English subtitle</text:p></draw:text-box></draw:frame>"
        "</draw:page></office:presentation>"
    )
    mime = "application/vnd.oasis.opendocument.presentation"
    doc = _read(_odf(tmp_path / "rtl.odp", mime, body))
    directions = _directions(doc)
    assert directions[HEBREW] == "rtl"
    assert directions["An English subtitle"] is None


def test_sheet_text_cells(tmp_path: Path) -> None:
    path = tmp_path / "rtl.csv"
    path.write_text(f"{HEBREW}\n{ARABIC}\n\nEnglish label\n", encoding="utf-8")
    directions = _directions(_read(path))
    assert directions[f"{HEBREW}\n{ARABIC}"] == "rtl"
    assert directions["English label"] is None
