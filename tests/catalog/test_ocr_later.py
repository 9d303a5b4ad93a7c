"""Pictures inside docx, pptx and xlsx follow the pdf pages to recognise: the server's extraction
jobs leave them `ocr: "pending"` (their page too), an `ocr` job of the page recognises that
page's pictures (under a budget of its own), the catalog recognises them after the text of
every document, keeps a page a read recognised, and takes documents most recently modified
first (`catalog.recent`).

Most tests stand a counting fake in for the engine (in this process: `ThreadBackend`), so they
need neither the `ocr` extra nor its seconds a picture; the one through the real engine skips
without it."""

from __future__ import annotations

import importlib.util
import io
import os
import struct
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import docx
import pytest
from PIL import Image

from dpe_server.catalog.catalog import Catalog
from dpe_server.catalog.recent import RecentFirst
from dpe_server.extractors.ocr import Word, states
from dpe_server.extractors.ooxml import picture_text
from dpe_server.isolation.backends import ThreadBackend
from dpe_server.model.tree import JSON, Page
from dpe_server.read.oneshot import OneShotReader
from fixtures.builders import scanned

HAS_OCR = importlib.util.find_spec("rapidocr_onnxruntime") is not None


def _png(width: int = 240, height: int = 60) -> io.BytesIO:
    """A picture big enough to be recognised (at least 200 x 40 pixels)."""
    buf = io.BytesIO()
    Image.new("L", (width, height), 255).save(buf, "PNG")
    buf.seek(0)
    return buf


def _docx(path: Path) -> Path:
    """Two sections (pages), a picture in each."""
    from fixtures.builders.docx import save

    doc = docx.Document()
    doc.add_paragraph("The first section holds a photographed note.")
    doc.add_picture(_png())
    doc.add_section()
    doc.add_paragraph("The second section holds another.")
    doc.add_picture(_png())
    return save(doc, path)


def _pptx(path: Path, pictures: tuple[int, ...] = (3, 1)) -> Path:
    """A slide per count, with that many pictures."""
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    for count in pictures:
        slide = deck.slides.add_slide(deck.slide_layouts[6])
        for n in range(count):
            slide.shapes.add_picture(_png(), Inches(1), Inches(1 + n))
    deck.save(str(path))
    return path


def _xlsx(path: Path) -> Path:
    from openpyxl import Workbook
    from openpyxl.drawing.image import Image as SheetImage

    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet["A1"] = "A sheet with a screenshot beside its cells"
    sheet.add_image(SheetImage(_png()), "C3")
    book.save(str(path))
    return path


@dataclass
class FakeEngine:
    """Stands in for `recognise`: says one word a picture, counts the pictures, and spends
    `seconds` of a clock of its own (the budget's `time.monotonic`)."""

    seconds: float = 0.0
    calls: int = 0
    now: float = 0.0
    seen: list[Any] = field(default_factory=list)

    def recognise(self, image: Any) -> list[Word]:
        self.calls += 1
        self.now += self.seconds
        return [Word("SEEN", 0, 0, 40, 12, 0.9)]

    def monotonic(self) -> float:
        return self.now


@pytest.fixture
def engine(monkeypatch: pytest.MonkeyPatch) -> FakeEngine:
    """The extra as if installed, its engine the fake (extraction runs in this process)."""
    fake = FakeEngine()
    monkeypatch.setattr(states, "installed", lambda: True)
    monkeypatch.setattr(picture_text, "recognise", fake.recognise)
    monkeypatch.setattr(picture_text, "time", SimpleNamespace(monotonic=fake.monotonic))
    return fake


@pytest.fixture(scope="module")
def office(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("office")
    _docx(folder / "note.docx")
    _pptx(folder / "deck.pptx")
    _xlsx(folder / "book.xlsx")
    return folder


def _pictures(page: Page) -> list[JSON]:
    return [e.metadata.get("ocr") for e in page.elements if e.category.value == "image"]


def _backend() -> ThreadBackend:
    return ThreadBackend(concurrency=2)


# ---- the jobs: extraction leaves pictures pending, an ocr job recognises a page's ------------


@pytest.mark.anyio
@pytest.mark.parametrize("name", ["note.docx", "deck.pptx", "book.xlsx"])
async def test_extraction_leaves_pictures_pending_and_the_page_job_recognises_them(
    office: Path, engine: FakeEngine, name: str
) -> None:
    backend = _backend()
    doc = await backend.extract(office, name)
    assert engine.calls == 0  # nothing recognised while the text is extracted
    first = doc.pages[0]
    assert first.metadata["ocr"] == "pending"
    assert set(_pictures(first)) == {"pending"}
    page = await backend.recognise(office, name, 0)
    assert page is not None
    assert page.metadata["ocr"] is True
    assert set(_pictures(page)) == {True}
    assert engine.calls == len(_pictures(first))  # that page's pictures, and only those
    pictures = [e for e in page.elements if e.category.value == "image"]
    assert all(e.content["text"] == "SEEN" for e in pictures)
    # The same page otherwise: the same elements, ids and order.
    assert [e.element_id for e in page.elements] == [e.element_id for e in first.elements]
    others = [e for e in page.elements if e.category.value != "image"]
    assert others == [e for e in first.elements if e.category.value != "image"]


@pytest.mark.anyio
async def test_a_page_job_has_a_budget_of_its_own(office: Path, engine: FakeEngine) -> None:
    """Pictures of 10 s each against 15 s: the third of a slide is skipped (its job fits its
    deadline); the next slide's job starts with the whole budget again."""
    engine.seconds = 10.0
    backend = _backend()
    first = await backend.recognise(office, "deck.pptx", 0)
    assert first is not None
    assert _pictures(first) == [True, True, "skipped"]
    assert first.metadata["ocr"] is True
    second = await backend.recognise(office, "deck.pptx", 1)
    assert second is not None
    assert _pictures(second) == [True]


def _huge_png(side: int = 20_000) -> bytes:
    """A PNG whose header says `side` x `side` one-bit grey pixels (400 million: Pillow's
    decompression-bomb check refuses to open it), with next to no data."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data)
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", side, side, 1, 0, 0, 0, 0)
    data = zlib.compress(b"\0" * 64)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", data) + chunk(b"IEND", b"")
    )


@pytest.mark.anyio
async def test_the_pixel_cap_counts_a_pictures_own_pixels_not_its_shown_size(
    tmp_path: Path, engine: FakeEngine
) -> None:
    """A 20,000 x 20,000 PNG shown 3 inches wide in a docx: 400 megapixels, over the 40
    megapixel cap, so it is neither left pending nor recognised, and the page reads. The old
    cap looked at the shown size (288 x 288): the picture went pending, and its page's ocr job
    opened it with Pillow, which refused it: "the .docx reader failed
    (DecompressionBombError)"."""
    from docx.shared import Inches

    from fixtures.builders.docx import save

    document = docx.Document()
    document.add_paragraph("A poster, shown small.")
    document.add_picture(io.BytesIO(_huge_png()), width=Inches(3))
    save(document, tmp_path / "poster.docx")
    backend = _backend()
    doc = await backend.extract(tmp_path, "poster.docx")
    (picture,) = [e for e in doc.pages[0].elements if e.category.value == "image"]
    assert "ocr" not in picture.metadata
    assert "ocr" not in doc.pages[0].metadata
    page = await backend.recognise(tmp_path, "poster.docx", 0)  # were it asked: it reads
    assert page is not None
    assert _pictures(page) == [None]
    assert engine.calls == 0


@pytest.mark.anyio
async def test_without_the_extra_pictures_say_unavailable_at_once(
    office: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_engine(image: Any) -> list[Word]:
        raise AssertionError("the engine was called")

    monkeypatch.setattr(states, "installed", lambda: False)
    monkeypatch.setattr(picture_text, "recognise", no_engine)
    catalog = Catalog(office, "h", _backend())
    await catalog.start()
    await catalog.warm()
    assert catalog.indexing() == 0  # nothing waits
    doc_ref = next(e.doc_ref for e in catalog.entries() if e.rel == "note.docx")
    page = await catalog.page(doc_ref, 0)
    assert "ocr" not in page.metadata
    assert _pictures(page) == ["unavailable"]


# ---- the catalog: pictures after the text of every document ----------------------------------


@pytest.mark.anyio
async def test_the_catalog_recognises_pictures_after_the_text_of_every_document(
    tmp_path: Path, engine: FakeEngine
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    _docx(folder / "note.docx")
    catalog = Catalog(folder, "h", _backend())
    await catalog.start()
    await catalog.warm()
    assert engine.calls == 0  # listable and readable before any picture is recognised
    (doc,) = catalog.documents()
    infos = await catalog.page_infos(doc.doc_ref)
    assert [i.metadata.get("ocr") for i in infos] == ["pending", "pending"]
    assert catalog.indexing() == 1

    await catalog.recognise_pending()
    assert engine.calls == 2
    infos = await catalog.page_infos(doc.doc_ref)
    assert [i.metadata.get("ocr") for i in infos] == [True, True]
    assert catalog.indexing() == 0
    page = await catalog.page(doc.doc_ref, 1)
    assert _pictures(page) == [True]
    assert engine.calls == 2  # kept like any page


@pytest.mark.anyio
async def test_a_page_read_before_the_warm_up_is_not_recognised_again(
    tmp_path: Path, engine: FakeEngine
) -> None:
    """A read recognises its page at once; the warm-up's whole-document extraction then
    keeps that page recognised (it comes back pending), and the background pass does not
    recognise it a second time."""
    folder = tmp_path / "docs"
    folder.mkdir()
    _pptx(folder / "deck.pptx", pictures=(1, 1))
    catalog = Catalog(folder, "h", _backend())
    await catalog.start()
    (doc,) = catalog.documents()
    read = await catalog.page(doc.doc_ref, 0)  # a slide read alone: recognised now
    assert _pictures(read) == [True]
    assert engine.calls == 1

    await catalog.warm()  # the whole deck, its pictures pending again
    infos = await catalog.page_infos(doc.doc_ref)
    assert [i.metadata.get("ocr") for i in infos] == [True, "pending"]
    assert _pictures(await catalog.page(doc.doc_ref, 1)) == [True]  # a read: recognised
    await catalog.recognise_pending()
    assert engine.calls == 2  # each slide once
    assert _pictures(await catalog.page(doc.doc_ref, 0)) == [True]
    assert catalog.indexing() == 0


# ---- most recently modified first --------------------------------------------------------------


def test_recent_first_takes_the_newest_once() -> None:
    queue: RecentFirst[str] = RecentFirst()
    for name, mtime in (("old", 1), ("new", 3), ("mid", 2), ("new", 3)):
        queue.add(name, mtime)
    assert len(queue) == 3  # "new" added twice under one time: queued once
    taken = queue.take()
    assert taken == ("new", 3)
    assert "new" in list(queue)  # taken, still waiting until done
    queue.done("new", 3)
    queue.add("old", 5)  # changed meanwhile: its new time counts, its old place is skipped
    assert queue.take() == ("old", 5)
    assert queue.take() == ("mid", 2)
    assert queue.take() is None
    assert not queue.queued()
    queue.done("mid", 2)
    queue.done("old", 1)  # an old time: "old" waits on under its new one
    assert list(queue) == ["old"]
    queue.done("old", 5)
    assert not queue


@pytest.mark.anyio
async def test_the_background_pass_takes_documents_newest_first(
    tmp_path: Path, engine: FakeEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for n in range(4):
        path = _pptx(folder / f"deck{n}.pptx", pictures=(1,))
        os.utime(path, (1_700_000_000 + 100 * ((n * 3) % 4),) * 2)  # mtimes shuffled
    catalog = Catalog(folder, "h", _backend())
    order: list[str] = []
    recognise = catalog.backend.recognise

    async def recorded(root: Path, rel: str, index: int) -> Page | None:
        order.append(rel)
        return await recognise(root, rel, index)

    monkeypatch.setattr(catalog.backend, "recognise", recorded)
    await catalog.start()
    await catalog.warm()
    await catalog.recognise_pending()
    assert order == ["deck1.pptx", "deck2.pptx", "deck3.pptx", "deck0.pptx"]  # by mtime


# ---- replicas sharing a store: one recognises a page, the other reads it -------------------------


class HeldOcr(ThreadBackend):
    """Counts its recognition jobs; holds them while `held` is unset."""

    def __init__(self) -> None:
        super().__init__(concurrency=2)
        self.recognised = 0
        self.started = anyio.Event()
        self.held: anyio.Event | None = None

    async def recognise(self, root: Path, rel: str, index: int) -> Page | None:
        self.recognised += 1
        self.started.set()
        if self.held is not None:
            await self.held.wait()
        return await super().recognise(root, rel, index)


@pytest.mark.anyio
async def test_two_replicas_recognise_a_page_once(
    tmp_path: Path, engine: FakeEngine, pg_url: str
) -> None:
    """Both read the pending slide: the first claims its recognition job; the second waits for
    it (no job of its own) and reads the page recognised from the store."""
    from dpe_server.catalog.postgres import PostgresStore
    from dpe_server.catalog.shared import recognise_job

    folder = tmp_path / "docs"
    folder.mkdir()
    _pptx(folder / "deck.pptx", pictures=(1,))
    backends = (HeldOcr(), HeldOcr())
    stores = [PostgresStore(pg_url) for _ in backends]
    try:
        a, b = (Catalog(folder, "h", backends[i], store=stores[i]) for i in range(2))
        for catalog in (a, b):
            await catalog.start()
            await catalog.warm()  # the first extracts the deck, the second reads it stored
        (entry,) = a.entries()
        backends[0].held = anyio.Event()
        pages: dict[str, Page] = {}

        async def read(name: str, catalog: Catalog) -> None:
            pages[name] = await catalog.page(entry.doc_ref, 0)

        async with anyio.create_task_group() as reads:
            reads.start_soon(read, "a", a)
            await backends[0].started.wait()  # A's job is under way, its claim held
            reads.start_soon(read, "b", b)
            with anyio.fail_after(20):
                while not b._recognising:  # B waits on A's claim
                    await anyio.sleep(0.01)
            backends[0].held.set()
        assert (backends[0].recognised, backends[1].recognised) == (1, 0)
        assert engine.calls == 1
        assert _pictures(pages["a"]) == _pictures(pages["b"]) == [True]
        infos = await b.page_infos(entry.doc_ref)
        assert [i.metadata.get("ocr") for i in infos] == [True]
        assert stores[0].extractions() == {
            entry.key: 1,
            recognise_job(entry.key, 0): 1,
        }
    finally:
        for store in stores:
            store.close()


# ---- the real engine: `dpe-server read` still returns the picture recognised ------------------


@pytest.fixture(scope="module")
def table_docx(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("table")
    scanned.write_docx(folder / "picture_table.docx")
    return folder


@pytest.mark.skipif(
    not HAS_OCR,
    reason="the ocr extra is not installed (pip install -e '.[ocr]'; python3 dev.py test does)",
)
def test_a_one_shot_read_returns_the_picture_recognised(table_docx: Path) -> None:
    import json

    with OneShotReader(table_docx, "h", cache=False) as reader:
        (doc,) = [e.doc_ref for e in reader.entries()]
        (body,) = reader.read(f"dpe://h/{doc}/pages/0")
    assert body.text is not None
    page = json.loads(body.text)
    assert page["ocr"] is True
    (picture,) = [e for e in page["elements"] if e["category"] == "image"]
    assert [row.split() for row in picture["content"]["text"].splitlines()] == scanned.TABLE
