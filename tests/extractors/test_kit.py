"""The kit formats build with: one answer where formats kept two."""

from __future__ import annotations

from dpe_server.extractors.docx import styles as docx_styles
from dpe_server.extractors.docx import xml as docx_xml
from dpe_server.extractors.kit.fonts import is_monospace
from dpe_server.extractors.odf import styles as odf_styles
from dpe_server.extractors.ooxml.strict import from_strict
from dpe_server.extractors.pptx import extract as pptx_extract
from dpe_server.extractors.pptx import text as pptx_text


def test_kit_one_monospace_list_for_every_format() -> None:
    for module in (docx_styles, pptx_text, odf_styles):
        assert module.is_monospace is is_monospace
    # docx lacked these two, pptx the first: every format now says code
    assert is_monospace(" IBM Plex Mono ")
    assert is_monospace("noto mono")
    # CJK prose fonts with fixed-width Latin letters are not code (pptx said MS Gothic was)
    assert not is_monospace("MS Gothic")
    assert not is_monospace("SimSun-ExtB")
    assert not is_monospace(None)
    assert not is_monospace("")
    assert not is_monospace("Calibri")


def test_kit_one_strict_mapping_for_docx_and_pptx() -> None:
    assert docx_xml.from_strict is pptx_extract.from_strict is from_strict
    strict = (
        b'<p:sld xmlns:p="http://purl.oclc.org/ooxml/presentationml/main" '
        b'xmlns:pic="http://purl.oclc.org/ooxml/drawingml/picture" '
        b'xmlns:cdr="http://purl.oclc.org/ooxml/drawingml/chartDrawing"/>'
    )
    assert from_strict(strict) == (
        b'<p:sld xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" '
        b'xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture" '
        b'xmlns:cdr="http://schemas.openxmlformats.org/drawingml/2006/chartDrawing"/>'
    )
