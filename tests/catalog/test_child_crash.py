"""A child that crashes its worker (issue 35, docs/children.md): a bounded, reported error on
that child alone; its container and the other children are served, whether the children are
read together (a batch, whose job the crash ends) or one by one."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest

from dpe_server.catalog.catalog import Catalog
from dpe_server.catalog.store import MemoryStore
from dpe_server.isolation.workers import ProcessBackend, WorkerSettings
from fixtures.builders.protected import FIXED, plain_docx

pytestmark = pytest.mark.anyio

RUNNER = "tests.hostile.runners:crash_on_child"
NAMES = ["a.docx", "segv.docx", "z.docx"]


async def test_a_child_that_crashes_its_worker_fails_alone(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    path = root / "box.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name in NAMES:
            z.writestr(zipfile.ZipInfo(name, FIXED), plain_docx([f"TEXT OF {name}"]))
    os.utime(path, (1_000_000_000, 1_000_000_000))  # not fresh: a failure is not retried
    backend = ProcessBackend(WorkerSettings(workers=1, runner=RUNNER))
    try:
        catalog = Catalog(root, "h", backend, store=MemoryStore())
        await catalog.start()
        await catalog.warm()
        await catalog.warm()  # the children the first listed
        by_path = {e.rel.partition("\0")[2]: e for e in catalog.entries()}
        assert sorted(by_path) == ["", *NAMES]
        crashed = by_path["segv.docx"]
        assert crashed.failed
        assert crashed.error is not None
        assert crashed.error.kind == "corrupt"
        assert "crashed" in crashed.error.message
        for name in ("", "a.docx", "z.docx"):
            assert by_path[name].current, name
        page = await catalog.page(by_path["z.docx"].doc_ref, 0)
        assert page.elements[0].content["text"] == "TEXT OF z.docx"
        container = await catalog.page(by_path[""].doc_ref, 0)
        assert [el.content["name"] for el in container.elements] == NAMES
    finally:
        await backend.aclose()
