"""The OCR part of a cache key belongs to the formats that may recognise a picture
(`Format.recognises_pictures`): a read of a web page, a text or an e-book never asks which
engine is installed (Tesseract's version: two processes per `dpe-server read`), and its key
does not change with the OCR settings; a pdf's or a picture's key does."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from dpe_server.extractors import DEFAULT_LIMITS, FORMATS, Limits, for_path, ocr
from dpe_server.extractors.ocr import settings
from dpe_server.model.children import SEP
from dpe_server.model.errors import ExtractionError
from dpe_server.read.oneshot import OneShotReader
from fixtures.build import documents

NEVER = sorted({fmt.name for fmt in FORMATS.values() if not fmt.recognises_pictures})


def test_a_web_page_read_asks_no_ocr_engine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[tuple[object, ...]] = []

    def spy(*args: object) -> str:
        asked.append(args)
        return "ocr=spied"

    monkeypatch.setattr(ocr, "cache_variant", spy)
    (tmp_path / "notes.md").write_text("# Title\n\nSome words.\n")
    with OneShotReader(tmp_path, cache_dir=tmp_path / "cache") as reader:
        (entry,) = reader.entries()
        (body,) = reader.read(f"dpe://{reader.host}/{entry.doc_ref}/pages/0?format=markdown")
        assert "Some words." in (body.text or "")
        assert asked == []  # old code: asked once, at the reader's start
        assert reader._fingerprint_of("notes.md") == reader._fingerprint_of("a/b.html")
        assert reader._fingerprint_of("scan.pdf").endswith("ocr=spied")
    assert len(asked) == 1


def test_keys_of_formats_without_ocr_do_not_follow_the_ocr_settings(tmp_path: Path) -> None:
    modes = (Limits(), Limits(ocr="off"), Limits(ocr="force"), Limits(ocr_languages=("en",)))
    web, pdf, child = set(), set(), set()
    for limits in modes:
        with OneShotReader(tmp_path, cache=False, limits=limits) as reader:
            web.add(reader._fingerprint_of("book.epub"))
            pdf.add(reader._fingerprint_of("scan.pdf"))
            child.add(reader._fingerprint_of(f"mail.eml{SEP}scan.pdf"))
    assert len(web) == 1
    assert len(pdf) == 4
    assert child == pdf  # a document inside one is keyed by its own format


@pytest.mark.parametrize("name", NEVER)
def test_formats_said_to_recognise_no_picture_never_ask_for_an_engine(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every fixture of such a format extracted with OCR on: no engine is asked for (each OCR
    path starts with `settings.chosen`), so leaving the OCR settings out of its key is safe."""
    asked: list[str] = []

    def chosen(engine: str = "auto") -> str:
        asked.append(engine)
        return ""

    monkeypatch.setattr(settings, "chosen", chosen)
    files = [p for p in documents() if FORMATS[p.suffix.lower()].name == name]
    if not files:
        pytest.skip(f"no fixture of {name}")
    for path in files:
        extractor = for_path(path)
        assert extractor is not None
        with path.open("rb") as f, contextlib.suppress(ExtractionError):  # (encrypted ones)
            extractor.extract(f, DEFAULT_LIMITS)
    assert asked == [], f"{name} asked for an OCR engine"


def test_the_spy_sees_a_format_that_recognises_pictures(monkeypatch: pytest.MonkeyPatch) -> None:
    """The guard above can fail: a picture, whose format recognises pictures, asks."""
    asked: list[str] = []

    def chosen(engine: str = "auto") -> str:
        asked.append(engine)
        return ""

    monkeypatch.setattr(settings, "chosen", chosen)
    (path,) = [p for p in documents() if p.name == "picture-photo.jpg"]
    extractor = for_path(path)
    assert extractor is not None
    assert FORMATS[".jpg"].recognises_pictures
    with path.open("rb") as f:
        extractor.extract(f, DEFAULT_LIMITS)
    assert asked
