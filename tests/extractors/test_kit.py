"""The kit formats build with: one answer where formats kept two."""

from __future__ import annotations

from pathlib import Path

import pytest

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


def test_kit_raw_members_inflate_under_the_caps_before_they_are_copied() -> None:
    """`Package.raw` hands over a part's compressed bytes only once they inflated whole under
    the caps; `repack` writes them as a zip that reads back to the same parts, names
    normalised and sizes as counted."""
    import dataclasses
    import io
    import zipfile

    import pytest

    from dpe_server.extractors import DEFAULT_LIMITS
    from dpe_server.extractors.kit.package import Package
    from dpe_server.extractors.kit.repack import repack
    from dpe_server.model.errors import TooLargeError

    parts = {"xl\\big.xml": b"<a>" + b"0" * 3_000_000 + b"</a>", "small.xml": b"<b/>"}
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("xl\\big.xml", parts["xl\\big.xml"], zipfile.ZIP_DEFLATED)
        z.writestr("small.xml", parts["small.xml"], zipfile.ZIP_STORED)
    tight = dataclasses.replace(DEFAULT_LIMITS, max_part_bytes=1_000_000, max_ratio=1e9)
    with Package(io.BytesIO(buf.getvalue()), "xlsx", tight) as pkg, pytest.raises(TooLargeError):
        pkg.raw("xl/big.xml")
    limits = dataclasses.replace(DEFAULT_LIMITS, max_ratio=1e9)
    with Package(io.BytesIO(buf.getvalue()), "xlsx", limits) as pkg:
        members = [pkg.raw("xl/big.xml"), pkg.raw("small.xml")]
    assert all(m is not None for m in members)
    assert len(members[0].data) < 100_000  # type: ignore[union-attr]
    with zipfile.ZipFile(repack(m for m in members if m is not None)) as z:
        assert z.testzip() is None
        assert z.read("xl/big.xml") == parts["xl\\big.xml"]
        assert z.read("small.xml") == parts["small.xml"]
        assert z.getinfo("xl/big.xml").file_size == len(parts["xl\\big.xml"])


def test_a_format_asking_for_what_it_was_not_handed_is_told_what_and_by_whom() -> None:
    from dpe_server.extractors.kit.handed import Handed

    slot: Handed[int] = Handed("cell layout for the value sheets")
    assert slot.maybe() is None
    with pytest.raises(RuntimeError, match="no cell layout for the value sheets was handed over"):
        slot.get()
    slot.give(7)
    assert (slot.get(), slot.maybe()) == (7, 7)


def test_kit_whole_inflates_in_one_call_what_read_gives_or_leaves_the_part_to_read(
    tmp_path: Path,
) -> None:
    """`Package.whole` gives `read`'s bytes, inflated into one buffer; a part larger than the
    caller takes at once, one whose zip directory understates its size and one whose CRC is
    wrong get None, and `read` refuses the last two as it always did."""
    import dataclasses

    from dpe_server.extractors import DEFAULT_LIMITS
    from dpe_server.extractors.kit.package import Package
    from dpe_server.model.errors import CorruptError
    from tests.hostile.zipgen import plain, write_zip

    content = b"<a>" + b"x" * 100_000 + b"</a>"
    lying = dataclasses.replace(plain("b.xml", content), declared_size=1000)
    bad_crc = dataclasses.replace(plain("c.xml", content), crc=0)
    stored = plain("d.xml", content, deflate=False)
    path = write_zip(tmp_path / "p.xlsx", [plain("a.xml", content), lying, bad_crc, stored])
    with path.open("rb") as f, Package(f, "xlsx", DEFAULT_LIMITS) as pkg:
        assert pkg.whole("a.xml", 1 << 20) == pkg.read("a.xml") == content
        assert pkg.whole("d.xml", 1 << 20) == content
        assert pkg.whole("a.xml", 1000) is None
        for name in ("b.xml", "c.xml"):
            assert pkg.whole(name, 1 << 20) is None
            with pytest.raises(CorruptError):
                pkg.read(name)
