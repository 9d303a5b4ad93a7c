"""EPUB 2 and 3 (.epub): a page per chapter of the spine titled by the table of contents
(EPUB 3's navigation document, EPUB 2's NCX), the cover and pictures served at Level 3,
Dublin Core metadata; DRM is `encrypted` (an obfuscated font is not DRM); an inflation bomb
is stopped by the guarded zip reader."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import pytest

from dpe_server.extractors import DEFAULT_LIMITS, for_path
from dpe_server.extractors.base import Limits
from dpe_server.isolation.pictures import picture
from dpe_server.model.errors import EncryptedError, TooLargeError
from dpe_server.model.tree import Category, Document, Element
from fixtures.builders import epub
from fixtures.builders.pptx import png


def _read(data: bytes, limits: Limits = DEFAULT_LIMITS) -> Document:
    extractor = for_path("book.epub")
    assert extractor is not None
    return extractor.extract(io.BytesIO(data), limits)


def _all(doc: Document, category: Category) -> list[Element]:
    return [e for p in doc.pages for e in p.elements if e.category is category]


def test_epub3_with_a_navigation_document(fixture_dir: Path) -> None:
    doc = _read((fixture_dir / epub.EPUB3).read_bytes())
    props = doc.properties
    assert props.title == "EB-Title Rivers of the North"
    assert props.keywords == ("Rivers", "Natural history")
    assert props.summary == "EB-Summary Three short chapters on northern rivers."
    assert props.extra == {
        "epub_version": "3.0",
        "creator": "Ana Ribeiro",
        "language": "en",
        "publisher": "Otter Press",
    }
    # the spine in order (the cover too, though not linear), titled by the toc
    assert [p.title for p in doc.pages] == ["Cover", "EB-Toc1 The Source", "EB-Toc2 The Delta"]
    cover, chart = _all(doc, Category.IMAGE)
    assert cover.metadata == {"part": "OEBPS/images/cover.png"}  # the SVG of the cover page
    assert chart.content["description"] == "EB-Alt A map of the river"
    (table,) = _all(doc, Category.TABLE)
    assert table.content["rows"] == [["EB-Cell Upper", "40 km"]]
    texts = [e.content["text"] for e in _all(doc, Category.TEXT)]
    assert "First note and a span." in texts  # after a self-closed <a id/>
    for element, colour in ((cover, (30, 60, 120)), (chart, (20, 140, 60))):
        with (fixture_dir / epub.EPUB3).open("rb") as f:
            found = picture(f, epub.EPUB3, element.metadata)
        assert found is not None
        assert found[0] == png(4 if element is cover else 3, 3, colour)


def test_epub2_with_an_ncx(fixture_dir: Path) -> None:
    doc = _read((fixture_dir / epub.EPUB2).read_bytes())
    assert doc.properties.title == "EB-Title2 Letters from the Coast"
    assert doc.properties.extra["creator"] == "João Pereira"
    assert [p.title for p in doc.pages] == ["EB-Ncx1 First letter", "EB-Ncx2 Second letter"]
    assert "EB-Letter2 A maçã está madura." in [
        e.content.get("text") for e in doc.pages[1].elements
    ]  # declared iso-8859-1
    (cover,) = _all(doc, Category.IMAGE)  # shown by no chapter: it closes the first page
    assert cover.element_id == "p0-img1"
    assert cover.metadata == {"part": "OEBPS/cover.png", "cover": True}


def _with(members: dict[str, bytes], tmp_path: Path) -> bytes:
    return epub.write_epub(tmp_path / "x.epub", members).read_bytes()


def test_drm_is_encrypted_and_an_obfuscated_font_is_not(tmp_path: Path) -> None:
    members = epub.epub3_members()
    members["META-INF/encryption.xml"] = members["META-INF/encryption.xml"].replace(
        b"http://www.idpf.org/2008/embedding", b"http://www.w3.org/2001/04/xmlenc#aes128-cbc"
    )
    with pytest.raises(EncryptedError, match=r"DRM.*encrypts 1 of its resources.*aes128-cbc"):
        _read(_with(members, tmp_path))


def test_an_inflation_bomb_is_too_large(tmp_path: Path) -> None:
    members = epub.epub3_members()
    members["OEBPS/text/chapter1.xhtml"] = b"<p>" + b" " * (300 * 1024 * 1024)
    data = _with(members, tmp_path)
    assert len(data) < 1024 * 1024
    with pytest.raises(TooLargeError):  # stopped while inflating, at the part cap
        _read(data)


def test_chapters_past_max_pages_are_left_out(fixture_dir: Path) -> None:
    limits = dataclasses.replace(DEFAULT_LIMITS, max_pages=2)
    doc = _read((fixture_dir / epub.EPUB3).read_bytes(), limits)
    assert len(doc.pages) == 2
    assert doc.metadata == {"truncated": True}
