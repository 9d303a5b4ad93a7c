"""An OCR engine that runs out of memory is the worker's trouble, not the page's: the job runs
again in a fresh worker, the page is recognised there, and nothing says `failed`, in the
catalog or in the cache it leaves for the next start."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from dpe_server.catalog.catalog import Catalog
from dpe_server.catalog.sqlite import SqliteStore
from dpe_server.extractors.ocr.engine import EngineExhausted, exhausted, recognise
from dpe_server.isolation.jobs import Job, out_of_memory
from dpe_server.isolation.workers import ProcessBackend, WorkerSettings
from dpe_server.model.tree import JSON, Page
from tests.catalog.test_ocr_later import _docx
from tests.hostile.runners import ONNX_OUT_OF_MEMORY

pytestmark = pytest.mark.anyio
RUNNER = "tests.hostile.runners:ocr_exhausted_once"


def _pictures(page: Page) -> list[JSON]:
    return [e.metadata.get("ocr") for e in page.elements if e.category.value == "image"]


async def test_an_engine_out_of_memory_is_retried_in_a_fresh_worker_and_never_stored_failed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The engine fails to allocate once (as onnxruntime does in a worker grown past its
    address-space limit): the page is recognised by the retry in a fresh worker, the retry is
    logged, and the page the cache keeps says recognised; the old server stored it `failed`,
    kind `corrupt`, for good."""
    folder = tmp_path / "docs"
    folder.mkdir()
    _docx(folder / "note.docx")
    store = SqliteStore(tmp_path / "cache")
    backend = ProcessBackend(WorkerSettings(workers=1, runner=RUNNER))
    caplog.set_level(logging.WARNING, "dpe_server.isolation.workers")
    try:
        catalog = Catalog(folder, "h", backend, store=store)
        await catalog.start()
        await catalog.warm()
        (entry,) = catalog.entries()
        key = entry.key
        assert (await catalog.page_infos(entry.doc_ref))[0].metadata["ocr"] == "pending"
        started = backend.started
        page = await catalog.page(entry.doc_ref, 0)  # a read recognises it now
        assert (tmp_path / "oom-once").exists()  # the engine did run out once
        assert _pictures(page) == [True]
        assert page.metadata["ocr"] is True
        assert "ocr_error" not in page.metadata
        assert any(e.content.get("text") == "RECOGNISED" for e in page.elements)
        assert backend.started == started + 1  # the retry's fresh worker
        assert any(
            "ran out of memory" in r.getMessage() and "fresh worker" in r.getMessage()
            for r in caplog.records
        )
        stored = store.page(key, 0)
        assert stored is not None
        assert stored.metadata["ocr"] is True
        assert _pictures(stored) == [True]
    finally:
        store.close()
        await backend.aclose()


async def test_an_engine_out_of_memory_twice_leaves_the_page_pending(tmp_path: Path) -> None:
    """Out of memory in the fresh worker too: the page stays pending (tried again at its next
    read), never stored as failed."""
    folder = tmp_path / "docs"
    folder.mkdir()
    _docx(folder / "note.docx")
    backend = ProcessBackend(WorkerSettings(workers=1, runner=RUNNER))
    try:
        catalog = Catalog(folder, "h", backend)
        await catalog.start()
        await catalog.warm()
        (entry,) = catalog.entries()
        (tmp_path / "oom-always").touch()
        page = await catalog.page(entry.doc_ref, 0)
        assert page.metadata["ocr"] == "pending"
        assert _pictures(page) == ["pending"]
    finally:
        await backend.aclose()


def test_the_engines_refused_allocations_are_told_from_other_errors() -> None:
    assert exhausted(RuntimeError(ONNX_OUT_OF_MEMORY))
    assert exhausted(MemoryError())
    assert exhausted(RuntimeError("OpenCV(4.9.0) error: (-4:Insufficient memory) Failed"))
    assert not exhausted(RuntimeError("[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : bad shape"))


def test_recognise_raises_engine_exhausted(monkeypatch: pytest.MonkeyPatch) -> None:
    from PIL import Image

    from dpe_server.extractors.ocr import engine

    def refuse(pixels: object) -> None:
        raise RuntimeError(ONNX_OUT_OF_MEMORY)

    monkeypatch.setattr(engine, "_engine", lambda: refuse)
    with pytest.raises(EngineExhausted):
        recognise(Image.new("L", (240, 60), 255))


def test_an_ocr_job_out_of_memory_is_transient_an_extraction_is_not(tmp_path: Path) -> None:
    """In-process (threads, `dpe-server read`): the ocr job's result says transient (the page
    stays pending); an extraction that runs out says `too_large`, bound to the memory limit."""
    ocr = out_of_memory(Job(str(tmp_path), "a.docx", "ocr"))["error"]
    extract = out_of_memory(Job(str(tmp_path), "a.docx", "extract"))["error"]
    assert isinstance(ocr, dict)
    assert isinstance(extract, dict)
    assert ocr["transient"] is True
    assert extract["transient"] is False
    assert extract["kind"] == ocr["kind"] == "too_large"
    assert extract["bound"] is True
