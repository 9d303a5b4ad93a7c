"""A file added while the server lists and probes the folder at start is served: the watcher
starts once every file is probed (seconds on a large folder), and what changed before it ran
was never seen (a file copied in during start-up stayed unlisted until something near it
changed again or the server restarted)."""

from __future__ import annotations

import threading
from pathlib import Path

import anyio
import anyio.to_thread
import pytest

from dpe_server.isolation.backends import ThreadBackend
from dpe_server.model.tree import Properties
from dpe_server.surface.app import DpeApp, Settings
from tests.e2e.harness import make_folder, write_deck

pytestmark = pytest.mark.anyio


class HeldProbes(ThreadBackend):
    """Probes that wait for `go` once the first has started (`probing`)."""

    def __init__(self) -> None:
        super().__init__()
        self.probing = threading.Event()
        self.go = threading.Event()

    async def probe(self, root: Path, rel: str) -> Properties:
        self.probing.set()
        await anyio.to_thread.run_sync(self.go.wait)
        return await super().probe(root, rel)


async def test_a_file_added_during_start_up_probes_is_listed(tmp_path: Path) -> None:
    folder = make_folder(tmp_path / "docs")
    backend = HeldProbes()
    app = DpeApp(
        Settings(root=folder, host="h", cache=False, warm=False, debounce_ms=50, backend=backend)
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(app.run_background, tg)
        with anyio.fail_after(30):
            await anyio.to_thread.run_sync(backend.probing.wait)  # listed, probing
            write_deck(folder / "late.pptx", ["Late"])
            backend.go.set()
            while "late.pptx" not in {e.rel for e in app.catalog.entries()}:
                await anyio.sleep(0.05)
        tg.cancel_scope.cancel()
    await app.aclose()
