"""The serving reader with big bodies: the Level 3 size cap, one render for many concurrent
reads of one element, bodies of different URIs never shared, renders off the event loop (a
Level 0 read is answered meanwhile)."""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest

from dpe_server.catalog.catalog import Catalog
from dpe_server.catalog.folder import doc_ref_for
from dpe_server.catalog.store import MemoryStore
from dpe_server.isolation.backends import ThreadBackend
from dpe_server.model import uri as uri_module
from dpe_server.model.uri import DpeUri, Param
from dpe_server.read import plan as plan_module
from dpe_server.read.body_cache import BIG_BYTES
from dpe_server.read.oneshot import OneShotReader
from dpe_server.read.reader import Reader
from dpe_server.views import render as render_module
from dpe_server.views.element_cap import DEFAULT_MAX_ELEMENT_BYTES
from tests.e2e.harness import BIG_CELL, BIG_ROWS, write_big_book

pytestmark = pytest.mark.anyio

HOST = "local.dpe.docs"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    write_big_book(root / "big.xlsx")
    return root


def _element(name: str) -> str:
    return f"dpe://{HOST}/{doc_ref_for(name)}/elements/p0-tbl1"


@asynccontextmanager
async def reader_of(root: Path, **kwargs: Any) -> AsyncIterator[Reader]:
    catalog = Catalog(root, HOST, ThreadBackend(), store=MemoryStore())
    await catalog.start()
    yield Reader(catalog, HOST, **kwargs)


async def _text(reader: Reader, uri: str) -> str:
    text = (await reader.read(uri))[0].text
    assert text is not None
    return text


class Renders:
    """`render.render` wrapped: counts the renders of one level (3 unless told) and can hold
    them until released."""

    def __init__(self, hold: bool = False, level: int = 3) -> None:
        self.count = 0
        self.started = threading.Event()
        self.release = threading.Event()
        self.finished = threading.Event()
        self.hold = hold
        self.level = level
        self._render: Callable[..., str] = render_module.render

    def __call__(self, level: int, payload: Any, fmt: Any) -> str:
        if level == self.level:
            self.count += 1
            self.started.set()
            if self.hold:
                self.release.wait(5)  # on the event loop this would freeze it: bounded
        try:
            return self._render(level, payload, fmt)
        finally:
            if level == self.level:
                self.finished.set()


async def test_big_element_is_served_cut_to_the_cap(folder: Path) -> None:
    async with reader_of(folder, max_element_bytes=100_000) as reader:
        text = await _text(reader, _element("big.xlsx"))
    payload = json.loads(text)
    assert len(text.encode()) <= 100_000
    assert len(payload["content"]["rows"]) == BIG_ROWS
    assert payload["cut"]["max_bytes"] == 100_000
    assert payload["cut"]["bytes"] > 3_000_000
    assert payload["content"]["rows"][0][1].endswith(f"[cut: {BIG_CELL + 5:,} characters in all]")


async def test_server_and_one_shot_read_serve_the_same_cut_element(folder: Path) -> None:
    uri = _element("big.xlsx") + "?format=markdown"
    async with reader_of(folder) as reader:
        served = await _text(reader, uri)
    with OneShotReader(folder, HOST, cache=False) as one_shot:
        printed = one_shot.read(uri)[0].text
    assert served == printed
    assert f"Cut to fit {DEFAULT_MAX_ELEMENT_BYTES:,} bytes" in served


async def test_no_cap_serves_the_element_whole(folder: Path) -> None:
    async with reader_of(folder, max_element_bytes=0) as reader:
        payload = json.loads(await _text(reader, _element("big.xlsx")))
    assert "cut" not in payload
    assert len(payload["content"]["rows"][0][1]) == BIG_CELL + 5


async def test_concurrent_reads_of_one_big_element_render_it_once(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    renders = Renders(hold=True)
    monkeypatch.setattr(render_module, "render", renders)
    got: list[str] = []
    async with reader_of(folder) as reader:
        await reader.catalog.element(doc_ref_for("big.xlsx"), "p0-tbl1")  # extracted

        async def read() -> None:
            got.append(await _text(reader, _element("big.xlsx")))

        async with anyio.create_task_group() as tg:
            for _ in range(20):
                tg.start_soon(read)
            await anyio.wait_all_tasks_blocked()  # every read waits for the one render
            renders.release.set()
    assert renders.count == 1
    assert len(got) == 20
    assert len(set(got)) == 1


async def test_level0_is_answered_while_a_big_element_renders(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    renders = Renders(hold=True)
    monkeypatch.setattr(render_module, "render", renders)
    async with reader_of(folder, max_element_bytes=0) as reader:
        await reader.catalog.element(doc_ref_for("big.xlsx"), "p0-tbl1")
        async with anyio.create_task_group() as tg:
            tg.start_soon(_text, reader, _element("big.xlsx"))
            await anyio.to_thread.run_sync(renders.started.wait, 5)
            catalog = json.loads(await _text(reader, f"dpe://{HOST}"))
            big_render_still_running = not renders.finished.is_set()
            renders.release.set()
    assert catalog["total_count"] == 1
    assert big_render_still_running


async def test_a_new_query_parameter_that_shapes_a_body_gets_bodies_of_its_own(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A query parameter is registered in one place (`uri.PARAMS`) and is part of the key big
    bodies are shared and kept under: two concurrent reads of one page differing only in it
    get each its own body, and so do later reads of the kept ones (a key listing the
    parameters by hand, without it, served the first read's body to both)."""
    monkeypatch.setitem(
        uri_module.PARAMS, "tone", Param(frozenset({2}), lambda _uri, value: value or "plain")
    )
    view = plan_module.page_view

    def toned_view(host: str, doc_ref: str, page: Any, uri: DpeUri) -> dict[str, Any]:
        payload = view(host, doc_ref, page, uri)
        payload["tone"] = uri.param("tone")
        payload["padding"] = "x" * 2 * BIG_BYTES  # big: rendered off the loop, shared, kept
        return payload

    monkeypatch.setattr(plan_module, "page_view", toned_view)
    renders = Renders(hold=True, level=2)
    monkeypatch.setattr(render_module, "render", renders)
    page = f"dpe://{HOST}/{doc_ref_for('big.xlsx')}/pages/0"
    got: dict[str, str] = {}

    async def tone(reader: Reader, value: str) -> str:
        return str(json.loads(await _text(reader, f"{page}?tone={value}"))["tone"])

    async with reader_of(folder) as reader:
        await reader.catalog.page(doc_ref_for("big.xlsx"), 0)  # extracted

        async def read(value: str) -> None:
            got[value] = await tone(reader, value)

        async with anyio.create_task_group() as tg:
            tg.start_soon(read, "loud")
            tg.start_soon(read, "quiet")
            await anyio.wait_all_tasks_blocked()  # both in flight at once
            renders.release.set()
        kept = {value: await tone(reader, value) for value in ("quiet", "loud")}
        plain = await tone(reader, "")
    assert got == {"loud": "loud", "quiet": "quiet"}
    assert kept == {"loud": "loud", "quiet": "quiet"}
    assert plain == "plain"
    assert renders.count == 3  # loud, quiet, plain: each rendered once


@pytest.mark.corpus
async def test_corpus_shared_strings_table_is_served_within_the_cap(
    corpus: Path, tmp_path: Path
) -> None:
    name = "poi__poc-shared-strings.xlsx"
    folder = tmp_path / "docs"
    folder.mkdir()
    shutil.copy2(corpus / "xlsx" / name, folder / name)
    async with reader_of(folder) as reader:
        text = await _text(reader, _element(name))
        markdown = await _text(reader, _element(name) + "?format=markdown")
    payload = json.loads(text)
    assert len(text.encode()) <= DEFAULT_MAX_ELEMENT_BYTES
    rows = payload["content"]["rows"]
    assert len(rows) == payload["content"]["total_rows"] == 162
    assert all(cell.endswith("[cut: 32,767 characters in all]") for row in rows for cell in row)
    # 162 rows × 3 cells of 32,767 characters and no header (three equal strings are not
    # column names): about 16 MB before the cut.
    assert payload["cut"]["bytes"] > 15_000_000
    assert len(markdown.encode()) <= DEFAULT_MAX_ELEMENT_BYTES
