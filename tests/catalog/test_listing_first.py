"""Level 0 answers as soon as the folder is listed: every file in its state, `indexing` until
its probe answers, never waiting for probes (a legacy file's probe converts it: seconds each)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import anyio.abc
import mcp_types as types
import pytest
from mcp import Client

from dpe_server.catalog.catalog import Catalog
from dpe_server.catalog.store import MemoryStore
from dpe_server.isolation.backends import ThreadBackend
from dpe_server.model.errors import CorruptError
from dpe_server.model.tree import Properties
from dpe_server.surface.app import Settings, build_server
from tests.e2e.harness import Inbox, is_list_changed

pytestmark = pytest.mark.anyio

FILES = 100


class HeldProbes(ThreadBackend):
    """Probes that wait until the test lets them answer (as slow as a folder of legacy files
    converted one by one)."""

    def __init__(self) -> None:
        super().__init__()
        self.go = anyio.Event()
        self.waiting = 0

    async def probe(self, root: Path, rel: str) -> Properties:
        self.waiting += 1
        await self.go.wait()
        return await super().probe(root, rel)


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(FILES):
        path = folder / f"sheet{i:03}.csv"
        path.write_text(f"name,value\nrow,{i}\n", encoding="utf-8")
        os.utime(path, (1_600_000_000, 1_600_000_000))  # settled: a failure is not retried
    return folder


async def _level0(client: Client) -> dict[str, object]:
    result = await client.read_resource("dpe://h")
    item = result.contents[0]
    assert isinstance(item, types.TextResourceContents)
    parsed: dict[str, object] = json.loads(item.text)
    return parsed


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_level0_of_slow_to_probe_files_lists_them_all_at_once(tmp_path: Path) -> None:
    """100 files whose probes do not answer yet: Level 0 and resources/list answer at once with
    all 100, each `indexing`; once the probes answer the list is announced changed and each
    reads as probed."""
    backend = HeldProbes()
    inbox = Inbox()
    server = build_server(
        Settings(root=_folder(tmp_path), host="h", watch=False, cache=False, backend=backend)
    )
    async with Client(server, mode="legacy", cache=None, message_handler=inbox.handler) as client:
        with anyio.fail_after(5):  # the old catalog answered only once every probe had
            listing = await _level0(client)
            listed = await client.list_resources()
        docs = listing["documents"]
        assert isinstance(docs, list)
        assert listing["total_count"] == FILES
        assert sorted(d["title"] for d in docs) == [f"sheet{i:03}" for i in range(FILES)]
        assert all(d["indexing"] is True and d["page_count"] == 0 for d in docs)
        assert len(listed.resources) == 50
        assert listed.next_cursor == "50"
        # resources/list says so too: a client building its catalog from the list alone
        # tells an unprobed file from an empty one
        assert all((r.meta or {}).get("indexing") is True for r in listed.resources)
        assert backend.waiting > 0  # probes were under way, none answered

        backend.go.set()
        await inbox.wait_for(is_list_changed, timeout=30)
        docs = (await _level0(client))["documents"]
        assert isinstance(docs, list)
        assert all(d["page_count"] == 1 for d in docs)
        relisted = (await client.list_resources()).resources
        assert all((r.meta or {}).get("page_count") == 1 for r in relisted)
        marked = {d["uri"] for d in docs if d.get("indexing")}
        assert {str(r.uri) for r in relisted if (r.meta or {}).get("indexing")} <= marked


class ProbeFails(ThreadBackend):
    """Extraction answers; the probe, asked after it, fails."""

    def __init__(self) -> None:
        super().__init__()
        self.extracted = anyio.Event()

    async def probe(self, root: Path, rel: str) -> Properties:
        await self.extracted.wait()
        raise CorruptError("late probe failed")


async def test_a_late_probe_does_not_overwrite_what_a_read_extracted(tmp_path: Path) -> None:
    """A file read while its probe is under way (the listing no longer waits for probes): the
    probe that answers after the extraction changes nothing of the document read."""
    folder = _folder(tmp_path)
    backend = ProbeFails()
    catalog = Catalog(folder, "h", backend, store=MemoryStore())
    probed = anyio.Event()

    async def start(tg: anyio.abc.TaskGroup) -> None:
        await catalog.start(tg)
        probed.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(start, tg)
        with anyio.fail_after(10):
            await catalog.listed.wait()
        entry = catalog.entries()[0]
        await catalog.outline(entry.doc_ref)
        assert entry.current
        backend.extracted.set()
        with anyio.fail_after(30):
            await probed.wait()
        assert entry.current
        assert not entry.failed
        assert catalog.info_of(entry).error is None
        assert catalog.info_of(catalog.entries()[1]).error is not None  # not read: its probe's
        tg.cancel_scope.cancel()
