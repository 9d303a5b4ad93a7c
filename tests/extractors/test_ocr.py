"""OCR of pages that are pictures (extractors/ocr, pdf_scanned): word recall on the scanned
fixtures, the page and element flags, `--ocr` modes, and the page without the extra."""

from __future__ import annotations

import importlib.util
import io
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import anyio
import docx
import mcp_types as types
import pytest
from mcp import Client

from dpe_server.catalog.catalog import Catalog, Change
from dpe_server.catalog.sqlite import SqliteStore
from dpe_server.cli.command import main
from dpe_server.extractors import DEFAULT_LIMITS, Limits
from dpe_server.extractors.ocr import Word, cache_variant, rapid, settings, states
from dpe_server.extractors.ocr import engine as ocr_engine
from dpe_server.extractors.ocr.engine import MAX_SIDE
from dpe_server.extractors.ocr.settings import ENGINE_PACKAGE, engine_version
from dpe_server.extractors.pdf.blocks import Block
from dpe_server.extractors.pdf.collect import PageContent, Run
from dpe_server.extractors.pdf.extract import extract
from dpe_server.extractors.pdf.scanned import _render, is_picture, picture_table
from dpe_server.isolation.workers import ProcessBackend, WorkerSettings
from dpe_server.model.content import ImageContent
from dpe_server.model.info import PageInfo
from dpe_server.model.tree import JSON, Element, Page
from dpe_server.read.oneshot import OneShotReader
from dpe_server.surface.app import Settings, build_server
from dpe_server.views.render import render_element
from fixtures.builders import scanned
from tests.e2e.harness import Inbox, is_updated

HAS_OCR = importlib.util.find_spec("rapidocr_onnxruntime") is not None
needs_ocr = pytest.mark.skipif(
    not HAS_OCR,
    reason="the ocr extra is not installed (pip install -e '.[ocr]'; python3 dev.py test does)",
)
LETTER = (0.0, 0.0, 612.0, 792.0)


@pytest.fixture(scope="module")
def scans(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("scans")
    scanned.build_pictures(out)
    return out


def _page(path: Path, limits: Limits = DEFAULT_LIMITS) -> Page:
    with path.open("rb") as f:
        return extract(f, limits).pages[0]


@pytest.fixture(scope="module")
def english(scans: Path) -> Page:
    return _page(scans / "scanned_en.pdf")


@pytest.fixture(scope="module")
def chinese(scans: Path) -> Page:
    path = scans / "scanned_zh.pdf"
    if not path.exists():
        pytest.skip(f"no CJK font at {scanned.CJK_FONT} (apt-get install fonts-wqy-microhei)")
    return _page(path)


def _recognised_text(page: Page) -> str:
    parts = []
    for e in page.elements:
        if e.metadata.get("ocr") is True:
            parts.append(" ".join(str(v) for v in e.content.values() if isinstance(v, str)))
    return "\n".join(parts)


@needs_ocr
def test_english_page_recall(english: Page) -> None:
    recall = scanned.recall_en(_recognised_text(english))
    assert recall >= 0.95, recall


@needs_ocr
def test_chinese_page_recall(chinese: Page) -> None:
    recall = scanned.recall_zh(_recognised_text(chinese))
    assert recall >= 0.90, recall


@needs_ocr
def test_recognised_page_says_ocr_and_keeps_reading_order(english: Page) -> None:
    assert english.metadata["ocr"] is True
    assert english.metadata["no_text_layer"] is True
    assert english.elements[0].category.value == "image"  # the scan itself is still listed
    text_elements = [e for e in english.elements if e.category.value != "image"]
    assert text_elements
    for e in text_elements:
        assert e.metadata["ocr"] is True
        confidence = e.metadata["confidence"]
        assert isinstance(confidence, float)
        assert 0.5 <= confidence <= 1.0
    text = _recognised_text(english)
    first, last = text.find("Quarterly"), text.find("operations office")
    assert 0 <= first < text.find("pumping station") < text.find("settling basin") < last


@pytest.fixture
def no_engine(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The engine's import fails, as without the extra."""
    rapid._engine.cache_clear()
    states.installed.cache_clear()
    monkeypatch.setitem(sys.modules, "rapidocr_onnxruntime", None)
    monkeypatch.setattr(settings, "tesseract", lambda: ("", "", ()))
    monkeypatch.setattr(settings, "engine_version", lambda: "")
    yield
    rapid._engine.cache_clear()
    states.installed.cache_clear()


@pytest.mark.usefixtures("no_engine")
def test_without_the_extra_the_page_says_unavailable(scans: Path) -> None:
    page = _page(scans / "scanned_en.pdf")
    assert page.metadata["ocr"] == "unavailable"
    assert page.metadata["no_text_layer"] is True
    assert [e.category.value for e in page.elements] == ["image"]
    assert not ocr_engine.available()


def test_ocr_off_leaves_the_page_as_a_picture(scans: Path) -> None:
    page = _page(scans / "scanned_en.pdf", Limits(ocr="off"))
    assert "ocr" not in page.metadata
    assert page.metadata["no_text_layer"] is True
    assert [e.category.value for e in page.elements] == ["image"]


def _run(text: str, y: float) -> Run:
    return Run(text, 72, 72 + 6 * len(text), y, 12, "Helvetica", False, False)


def _image(pixels: int, bbox: tuple[float, float, float, float]) -> Block:
    content = ImageContent(description="", mime_type="image/png", width=pixels, height=pixels)
    return Block("image", content, bbox[3], bbox[0], bbox[2], {"bbox": list(bbox)})


def test_auto_recognises_pictures_not_pages_with_a_text_layer() -> None:
    scan = [_image(1700, LETTER)]
    assert is_picture(PageContent(), LETTER, scan)
    assert is_picture(PageContent(runs=[_run("12", 40)]), LETTER, scan)  # a stray page number
    line = "A line of real text that fills the page width well enough"
    lines = [_run(line, y) for y in range(60, 760, 14)]
    assert not is_picture(PageContent(runs=lines), LETTER, scan)
    assert not is_picture(PageContent(), LETTER, [_image(300, (72, 600, 172, 680))])  # a logo
    assert not is_picture(PageContent(), LETTER, [_image(40, LETTER)])  # 5 dpi: nothing legible


def test_ocr_settings_are_part_of_the_cache_key(tmp_path: Path) -> None:
    modes = (Limits(), Limits(ocr="off"), Limits(ocr="force"), Limits(ocr_languages=("en",)))
    keys = set()
    for limits in modes:
        with OneShotReader(tmp_path, cache=False, limits=limits) as reader:
            keys.add(reader._fingerprint_of("scan.pdf"))
    assert len(keys) == 4
    assert cache_variant("off", ("en",)) == cache_variant("off", ("en", "zh"))


def test_engine_version_is_the_installed_distribution(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.metadata

    try:
        installed = importlib.metadata.version(ENGINE_PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        installed = ""
    assert engine_version() == installed
    (tmp_path / "rapidocr_onnxruntime-9.8.7.dist-info").mkdir()
    monkeypatch.setattr(sys, "path", [str(tmp_path / "absent"), str(tmp_path)])
    assert engine_version() == "9.8.7"
    monkeypatch.setattr(sys, "path", [str(tmp_path / "absent")])
    assert engine_version() == ""


def test_unknown_ocr_language_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["read", str(tmp_path), "dpe://x", "--ocr-languages", "en,f-r"])
    assert exited.value.code == 2
    assert "OCR languages f-r not understood; give ISO codes (en, zh" in capsys.readouterr().err


@pytest.mark.skipif(importlib.util.find_spec("pypdfium2") is None, reason="pypdfium2 absent")
def test_a_huge_page_is_rendered_within_the_pixel_cap(tmp_path: Path) -> None:
    from reportlab.pdfgen import canvas

    side = 5000.0  # points: 13,900 pixels a side at 200 dpi
    path = tmp_path / "poster.pdf"
    c = canvas.Canvas(str(path), pagesize=(side, side / 2), invariant=1)
    c.showPage()
    c.save()
    with path.open("rb") as f:
        image = _render(f, 0, (0.0, 0.0, side, side / 2))
    assert image.size == (MAX_SIDE, MAX_SIDE // 2)


def _docx_picture(path: Path, limits: Limits = DEFAULT_LIMITS) -> Element:
    from dpe_server.extractors.docx.extract import extract as extract_docx

    with path.open("rb") as f:
        doc = extract_docx(f, limits)
    (picture,) = [e for p in doc.pages for e in p.elements if e.category.value == "image"]
    return picture


@pytest.mark.parametrize("engine", ["tesseract", "rapidocr"])
def test_a_picture_of_a_table_in_a_docx_gives_its_text(scans: Path, engine: str) -> None:
    # each engine's boxes: Tesseract's hug their ink, and were taken for paragraphs apart
    if settings.chosen(engine) != engine:
        pytest.skip(f"{engine} is not installed (docs/ocr.md)")
    picture = _docx_picture(scans / "picture_table.docx", Limits(ocr_engine=engine))
    assert picture.metadata["ocr"] is True
    text = str(picture.content["text"])
    rows = [line.split() for line in text.splitlines()]
    assert rows == scanned.TABLE, text  # one line per row, cells left to right
    assert picture.content["table"] == {
        "headers": scanned.TABLE[0],
        "rows": scanned.TABLE[1:],
        "total_rows": 2,
        "total_columns": 3,
    }
    element = {**picture.to_json(), "uri": "dpe://h/d/elements/p0-img1"}
    markdown = render_element(element, markdown=True, full=True)
    table = (
        "| Item | Qty | Price |\n|---|---|---|\n| Bolts | 120 | 36.00 |\n"
        "| Washers | 300 | 12.50 |\n"
    )
    assert markdown == f"![](dpe://h/d/elements/p0-img1)\n\n{table}"  # its words once
    text = render_element(element, markdown=False, full=True)
    assert text.endswith("\nItem\tQty\tPrice\nBolts\t120\t36.00\nWashers\t300\t12.50\n")


def _boxes(rows: list[list[tuple[str, int]]], pitch: int = 80) -> list[Word]:
    """Recognised boxes: each row's (text, left pixel), 32 pixels tall, `pitch` apart."""
    return [
        Word(text, x, 30 + pitch * i, x + 14 * len(text), 62 + pitch * i, 0.99)
        for i, row in enumerate(rows)
        for text, x in row
    ]


def test_a_picture_is_a_table_only_where_its_boxes_stand_in_columns() -> None:
    columns = [[("Item", 20), ("Qty", 336), ("Price", 658)], [("Bolts", 20), ("120", 336)]]
    columns += [[("Nuts", 20), ("75", 336), ("9.10", 658)]]
    table = picture_table(_boxes(columns), 760, 260)
    assert table == {
        "headers": ["Item", "Qty", "Price"],
        "rows": [["Bolts", "120", ""], ["Nuts", "75", "9.10"]],
        "total_rows": 2,
        "total_columns": 3,
    }
    prose = [[(line, 20)] for line in scanned.EN_TEXT[:4]]  # one box a line: text, no table
    assert picture_table(_boxes(prose, 48), 1400, 260) is None
    two_rows = columns[:2]  # a table is at least three rows
    assert picture_table(_boxes(two_rows), 760, 180) is None


@pytest.mark.usefixtures("no_engine")
def test_without_the_extra_a_docx_picture_says_unavailable(scans: Path) -> None:
    picture = _docx_picture(scans / "picture_table.docx")
    assert picture.metadata["ocr"] == "unavailable"
    assert "text" not in picture.content


def test_a_document_past_its_ocr_budget_skips_its_pictures(scans: Path) -> None:
    picture = _docx_picture(scans / "picture_table.docx", Limits(picture_seconds=0.0))
    assert picture.metadata["ocr"] == "skipped"
    assert "text" not in picture.content


def test_small_pictures_are_not_recognised(tmp_path: Path) -> None:
    from PIL import Image

    from fixtures.builders.docx import save

    doc = docx.Document()
    buf = io.BytesIO()
    Image.new("L", (120, 30), 255).save(buf, "PNG")  # an icon: under 200 x 40 pixels
    doc.add_picture(io.BytesIO(buf.getvalue()))
    icon = _docx_picture(save(doc, tmp_path / "icon.docx"))
    assert "ocr" not in icon.metadata


# ---- the server: text layers first, then one job per page to recognise ----------------------

FAKE_OCR = "tests.hostile.runners:fake_ocr"


SHORT_PAGE = scanned.EN_TEXT[:1]
"""The lines of the server's scans: the title and one line. These tests are about the flow
(pending, jobs, deadlines, notices), not recall (the English page's): a short page takes about
half the CPU of the full one to recognise, and RapidOCR reads both of its lines (it misses a
line of some three-line scans)."""


def _scans_folder(root: Path, pages: int) -> Path:
    """`root/docs/scan.pdf`: `pages` scanned English pages of `SHORT_PAGE` (different noise)."""
    folder = root / "docs"
    folder.mkdir()
    images = [scanned.page_image(scanned.EN_TITLE, SHORT_PAGE, False, n) for n in range(pages)]
    scanned.write_pdf(folder / "scan.pdf", images)
    return folder


def _states(infos: Sequence[PageInfo]) -> list[JSON]:
    return [info.metadata.get("ocr") for info in infos]


@needs_ocr
@pytest.mark.anyio
async def test_the_server_lists_scans_pending_and_recognises_each_page(tmp_path: Path) -> None:
    """The server's path: a worker process under the default deadline and address-space cap
    (the engine loads within them), with the serve options' OCR settings. Extraction jobs
    leave a scan's pages to ocr jobs (`pending`); the warm-up extracts the text layer only; a
    read recognises the page it reads at once; the background pass the others; each is
    announced; once none waits the document's summary comes from the recognised text. The
    recall asserted is the short scan's (`SHORT_PAGE`): the full page's is the in-process
    `english` page's."""
    folder = _scans_folder(tmp_path, 2)
    changes: list[Change] = []

    async def listen(change: Change) -> None:
        changes.append(change)

    # One worker: the jobs below are one after the other, and each worker started loads the
    # engine (its own CPU) to recognise its first page.
    backend = ProcessBackend(WorkerSettings(workers=1), Limits(ocr_languages=("en",)))
    catalog = Catalog(folder, "h", backend, listen)
    try:
        (pending,) = await backend.extract_pages(folder, "scan.pdf", [0])
        assert pending.metadata["ocr"] == "pending"  # extraction jobs leave it to an ocr job
        assert [e.category.value for e in pending.elements] == ["image"]

        await catalog.start()
        await catalog.warm()
        (doc,) = catalog.documents()
        assert _states(await catalog.page_infos(doc.doc_ref)) == ["pending", "pending"]
        assert catalog.indexing() == 1  # its words are not all searchable yet
        assert "Maintenance" not in f"{doc.title} {doc.summary}"
        changes.clear()  # the warm-up's own (titles refined from the probe's)

        page = await catalog.page(doc.doc_ref, 1)  # read: recognised now, ahead of the queue
        assert page.metadata["ocr"] is True
        assert scanned.recall_en(_recognised_text(page), SHORT_PAGE) >= 0.95
        assert _states(await catalog.page_infos(doc.doc_ref)) == ["pending", True]
        assert changes == [Change(updated=frozenset({doc.doc_ref}))]

        await catalog.recognise_pending()
        assert _states(await catalog.page_infos(doc.doc_ref)) == [True, True]
        assert catalog.indexing() == 0
        assert changes[-1] == Change(list_changed=True, updated=frozenset({doc.doc_ref}))
        (doc,) = catalog.documents()
        # its recognised title (a heading, or the first line of text)
        assert "Maintenance" in f"{doc.title} {doc.summary}"
    finally:
        await backend.aclose()


@needs_ocr
@pytest.mark.anyio
async def test_a_page_past_its_deadline_fails_alone_and_stays_failed(tmp_path: Path) -> None:
    """Each page is a job with its own deadline: the page that hangs says `ocr: "failed"` and
    why, the others are recognised; a restart on the same cache (its outlines read back from
    their stored text, the pages left to recognise from their heads) recognises what was
    pending; the failed page is served as it is (no new job)."""
    folder = _scans_folder(tmp_path, 3)
    (tmp_path / "ocr-go").write_text('{"hang": [1]}')
    store = SqliteStore(tmp_path / "cache")
    backend = ProcessBackend(WorkerSettings(workers=2, timeout=4.0, runner=FAKE_OCR))
    try:
        first = Catalog(folder, "h", backend, store=store)
        await first.start()
        await first.warm()  # text layers only: nothing recognised yet
        store.close()
        store = SqliteStore(tmp_path / "cache")  # a restart over the same cache
        again = Catalog(folder, "h", backend, store=store)
        await again.start()
        (doc,) = again.documents()
        assert again.indexing() == 1
        assert _states(await again.page_infos(doc.doc_ref)) == ["pending"] * 3

        await again.recognise_pending()
        infos = await again.page_infos(doc.doc_ref)
        assert _states(infos) == [True, "failed", True]
        failed = await again.page(doc.doc_ref, 1)
        assert failed.metadata["ocr_error"] == {
            "kind": "timeout",
            "message": "Recognising the text of this page took longer than 4 seconds "
            "and was stopped.",
        }
        assert [e.category.value for e in failed.elements] == ["image"]
        assert (await again.page(doc.doc_ref, 0)).metadata["recognised_by"] == "test"
        assert again.documents()[0].error is None
        started = backend.started
        assert (await again.page(doc.doc_ref, 1)).metadata["ocr"] == "failed"
        assert backend.started == started  # kept like any page: no new job
    finally:
        store.close()
        await backend.aclose()


@needs_ocr
@pytest.mark.anyio
async def test_a_scan_longer_than_one_deadline_is_recognised_page_by_page(tmp_path: Path) -> None:
    """Six pages of 1.5 s each under a 6 s deadline: one job for the whole document (9 s)
    would be stopped; a job per page is not. (4.5 s of margin a page for its worker's start
    and its text layer: with 2 s, a page whose fresh worker started on a busy machine, two
    pages now recognised at once, was stopped.)"""
    folder = _scans_folder(tmp_path, 6)
    (tmp_path / "ocr-go").write_text('{"seconds": 1.5}')
    backend = ProcessBackend(WorkerSettings(workers=2, timeout=6.0, runner=FAKE_OCR))
    catalog = Catalog(folder, "h", backend)
    try:
        await catalog.start()
        await catalog.warm()
        await catalog.recognise_pending()
        (doc,) = catalog.documents()
        assert doc.error is None
        assert _states(await catalog.page_infos(doc.doc_ref)) == [True] * 6
    finally:
        await backend.aclose()


@needs_ocr
@pytest.mark.anyio
@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_a_subscriber_is_told_when_a_page_is_recognised(tmp_path: Path) -> None:
    """Through MCP: Level 1 lists the page `pending` while it waits, then the document's
    subscriber gets `notifications/resources/updated` and the page reads recognised."""
    folder = _scans_folder(tmp_path, 1)
    inbox = Inbox()
    backend = ProcessBackend(WorkerSettings(workers=2, runner=FAKE_OCR))
    server = build_server(
        Settings(root=folder, host="h", watch=False, cache=False, backend=backend)
    )
    async with Client(server, mode="legacy", cache=None, message_handler=inbox.handler) as client:
        with anyio.fail_after(30):
            await server.app.catalog.warmed.wait()
        (resource,) = (await client.list_resources()).resources
        uri = str(resource.uri)
        listed = json.loads(await _text(client, f"{uri}?depth=pages"))
        assert [p["ocr"] for p in listed["pages"]] == ["pending"]
        await client.subscribe_resource(uri)
        (tmp_path / "ocr-go").write_text("{}")  # the background pass may recognise now
        await inbox.wait_for(is_updated(uri), timeout=30)
        page = json.loads(await _text(client, f"{uri}/pages/0"))
        assert page["ocr"] is True


async def _text(client: Client, uri: str) -> str:
    result = await client.read_resource(uri)
    item = result.contents[0]
    assert isinstance(item, types.TextResourceContents)
    return item.text
