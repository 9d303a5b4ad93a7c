"""Text recognised in pictures (extractors/ocr with extractors/picture): pages scanned badly
(turned 90° and skewed 3°, speckled) in English, Chinese and Arabic read with Tesseract's
recall; two columns in reading order; a borderless table's cells; the engine named on the page;
RapidOCR on the upright pages; the corpus's scanned TIFF and WebP served with their text."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from dpe_server.extractors import Limits, for_path
from dpe_server.extractors.ocr.settings import chosen
from dpe_server.model.tree import Page
from fixtures.builders import scanned


def _engine(name: str) -> Limits:
    if chosen(name) != name:
        why = {
            "tesseract": "apt-get install tesseract-ocr tesseract-ocr-eng (docs/ocr.md)",
            "rapidocr": "pip install -e '.[ocr]'; python3 dev.py test does",
        }
        pytest.skip(f"{name} is not installed ({why[name]})")
    return Limits(ocr_engine=name)


@pytest.fixture(scope="module")
def scans(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bad-scans")
    scanned.build_scans(out)
    return out


def _page(path: Path, limits: Limits) -> Page:
    extractor = for_path(path)
    assert extractor is not None
    with path.open("rb") as f:
        (page,) = extractor.extract(f, limits).pages
    return page


def _text(page: Page) -> str:
    return "\n".join(str(e.content) for e in page.elements if e.metadata.get("ocr") is True)


def _scan(scans: Path, name: str) -> Path:
    path = scans / name
    if not path.exists():
        font = scanned.CJK_FONT if "zh" in name else scanned.ARABIC_FONT
        pytest.skip(f"no font at {font} (fonts-wqy-microhei, fonts-dejavu-core)")
    return path


RECALL: dict[str, tuple[Callable[[str], float], float]] = {
    "turned_en.png": (scanned.recall_en, 0.97),
    "turned_zh.png": (scanned.recall_zh, 0.95),
    "turned_ar.png": (scanned.recall_ar, 0.95),
}


@pytest.mark.parametrize("name", sorted(RECALL))
def test_tesseract_reads_a_page_fed_sideways_and_skewed(scans: Path, name: str) -> None:
    page = _page(_scan(scans, name), _engine("tesseract"))
    recall, least = RECALL[name]
    assert recall(_text(page)) >= least, _text(page)
    assert page.metadata["ocr"] is True
    assert page.metadata["ocr_rotated"] == 90  # turned upright before it was read
    assert str(page.metadata["ocr_engine"]).startswith("tesseract ")
    assert page.elements[0].category.value == "image"
    for e in page.elements[1:]:
        assert e.metadata["ocr"] is True
        assert 0.0 < float(str(e.metadata["confidence"])) <= 1.0


@pytest.mark.parametrize("engine", ["tesseract", "rapidocr"])
def test_two_columns_are_read_one_after_the_other(scans: Path, engine: str) -> None:
    page = _page(scans / "columns_en.png", _engine(engine))
    text = _text(page)
    if engine == "tesseract":  # RapidOCR runs words set close together into one
        assert scanned.recall_words(scanned.LEFT_TEXT + scanned.RIGHT_TEXT, text) >= 0.97, text
    # the whole left column before the right one, each in its order (spaces aside)
    marks = ["leftcolumnopens", "harbourmaster", "innerbasin", "rightcolumnlists"]
    marks += ["juniorcrews", "lighthouseandback"]
    flat = text.replace(" ", "")
    found = [flat.find(m) for m in marks]
    assert -1 not in found, text
    assert found == sorted(found), text


@pytest.mark.parametrize("engine", ["tesseract", "rapidocr"])
def test_a_scanned_table_keeps_every_cell(scans: Path, engine: str) -> None:
    page = _page(scans / "table_en.png", _engine(engine))
    text = _text(page)
    cells = [" ".join(row) for row in scanned.PRICE_LIST]
    assert scanned.recall_words(cells, text) >= 0.95, text
    for row in scanned.PRICE_LIST[1:]:
        assert row[0] in text
        assert row[3] in text


@pytest.mark.corpus
def test_the_corpus_scans_are_served_with_their_text(corpus: Path) -> None:
    """As the server reads them: the page count probed, the page asked for recognised (the
    TIFF's second page, which nothing below reads, is not: a few CPU-s of Tesseract)."""
    limits = _engine("tesseract")
    tif = corpus / "pictures" / "docling__2206.01062.tif"
    extractor = for_path(tif)
    assert extractor is not None
    assert extractor.extract_pages is not None
    with tif.open("rb") as f:
        assert extractor.probe(f, limits).page_count == 2
        f.seek(0)
        (page,) = extractor.extract_pages(f, [0], limits)
    first = _text(page)
    assert "DocLayNet: A Large Human-Annotated Dataset for Document-Layout Analysis" in first
    assert "Accurate document layout analysis is a key requirement" in first
    webp = _page(corpus / "pictures" / "docling__webp-test.webp", limits)
    assert "Docling bundles PDF document conversion to" in _text(webp)
