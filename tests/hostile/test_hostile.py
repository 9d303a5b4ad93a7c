"""The hostile sweep: every case of `cases.py` read through the real server over HTTP, under
the production limits (workers = cores, 60 s per parse, 2 GiB per worker), while a second
client keeps reading a healthy document. Every hostile file gets one of its expected
outcomes, every healthy read succeeds, nothing outside the folder leaks, and the serving
process's peak memory (VmHWM) stays under `SERVER_PEAK_MB`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse
from urllib.request import url2pathname

import anyio
import pytest
from mcp import Client

from tests.e2e.harness import HttpServer, connect, http_server, settled, write_doc
from tests.hostile.cases import SECRET, Case, build

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

SERVER_PEAK_MB = 300
"""The serving process's peak resident memory during the sweep: parsing happens in workers,
so only trees and protocol traffic count here (measured: about 80 MB)."""
SWEEP_SECONDS = 60


@dataclass
class Swept:
    folder: Path
    cases: dict[str, Case]
    server: HttpServer
    outcomes: dict[str, str] = field(default_factory=dict)
    texts: list[str] = field(default_factory=list)
    healthy_reads: int = 0
    healthy_failures: list[str] = field(default_factory=list)
    seconds: float = 0.0


def vm_hwm_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


async def _text(client: Client, uri: str) -> str:
    result = await client.read_resource(uri)
    return "".join(getattr(c, "text", "") for c in result.contents)


def _relative(folder: Path, file_uri: str) -> str:
    path = Path(url2pathname(urlparse(file_uri).path))
    return path.relative_to(folder.resolve()).as_posix()


def outcome_of(payload: dict[str, Any]) -> str:
    if "error" in payload:
        return str(payload["error"]["kind"])
    pages = payload.get("pages") or []
    if payload.get("truncated") or any(p.get("truncated") for p in pages):
        return "truncated"
    if any(p.get("broken") for p in pages):
        return "broken"
    return "ok"


async def _listed(client: Client) -> dict[str, str]:
    """file path relative to the folder → doc uri, for every listed document."""
    found: dict[str, str] = {}
    cursor: str | None = None
    while True:
        res = await (client.list_resources(cursor=cursor) if cursor else client.list_resources())
        for r in res.resources:
            meta = r.meta or {}
            found[str(meta["file_uri"])] = str(r.uri)
        cursor = res.next_cursor
        if not cursor:
            return found


async def _sweep(swept: Swept) -> None:
    url = swept.server.url
    done = anyio.Event()
    # A read may queue behind the hostile parses (two workers, each up to its 60 s deadline):
    # what bounds it is the sweep's own bound, asserted below, not the harness's 30 s.
    async with (
        connect("http", "legacy", swept.folder, url=url, read_timeout=SWEEP_SECONDS) as hostile,
        connect("http", "auto", swept.folder, url=url, read_timeout=SWEEP_SECONDS) as health,
    ):
        listed = await _listed(hostile)
        healthy_uri = next(u for f, u in listed.items() if f.endswith("healthy.docx"))

        async def keep_reading() -> None:
            while not done.is_set():
                try:
                    text = await _text(health, f"{healthy_uri}/pages/0")
                    assert "Healthy heading" in text
                    swept.healthy_reads += 1
                except Exception as exc:  # any failure is a finding: record, assert later
                    swept.healthy_failures.append(repr(exc))
                await anyio.sleep(0.05)

        async def read_one(rel: str, uri: str) -> None:
            text = await _text(hostile, f"{uri}?depth=pages")
            swept.texts.append(text)
            payload = json.loads(text)
            swept.outcomes[rel] = outcome_of(payload)
            if "error" not in payload and payload.get("pages"):
                swept.texts.append(await _text(hostile, f"{uri}/pages/0?format=markdown"))

        start = time.monotonic()
        async with anyio.create_task_group() as tg:
            tg.start_soon(keep_reading)
            with anyio.fail_after(SWEEP_SECONDS * 2):
                async with anyio.create_task_group() as readers:
                    for file_uri, uri in listed.items():
                        rel = _relative(swept.folder, file_uri)
                        readers.start_soon(read_one, rel, uri)
            done.set()
        swept.seconds = time.monotonic() - start


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Swept]:
    base = tmp_path_factory.mktemp("hostile")
    folder, scratch = base / "hostile", base / "scratch"
    folder.mkdir()
    scratch.mkdir()
    cases = build(folder, scratch)
    with http_server(folder, "--page-size", "100") as server:
        result = Swept(folder, cases, server)
        anyio.run(_sweep, result, backend="asyncio")
        result_peak = vm_hwm_mb(server.process.pid)
        result.texts.append(f"peak {result_peak}")
        yield result


def _expected(swept: Swept, kind: str) -> list[str]:
    return sorted(
        rel for rel, c in swept.cases.items() if ("absent" in c.outcomes) == (kind == "absent")
    )


def test_hostile_every_file_gets_an_expected_outcome(swept: Swept) -> None:
    wrong = {
        rel: (swept.outcomes.get(rel, "missing"), sorted(swept.cases[rel].outcomes))
        for rel in _expected(swept, "listed")
        if swept.outcomes.get(rel, "missing") not in swept.cases[rel].outcomes
    }
    _table(swept)
    assert wrong == {}


def test_hostile_links_and_lock_files_are_not_listed(swept: Swept) -> None:
    assert set(swept.outcomes) & set(_expected(swept, "absent")) == set()


def test_hostile_nothing_outside_the_folder_leaks(swept: Swept) -> None:
    assert not [t for t in swept.texts if SECRET in t]


def test_hostile_healthy_reads_all_succeed(swept: Swept) -> None:
    assert swept.healthy_failures == []
    assert swept.healthy_reads >= 5


def test_hostile_sweep_is_bounded_in_time(swept: Swept) -> None:
    assert swept.seconds < SWEEP_SECONDS


def test_hostile_server_memory_stays_bounded(swept: Swept) -> None:
    assert swept.server.process.poll() is None
    assert vm_hwm_mb(swept.server.process.pid) < SERVER_PEAK_MB


def _table(swept: Swept) -> None:
    print(
        f"\nhostile sweep: {len(swept.outcomes)} files in {swept.seconds:.1f} s, "
        f"{swept.healthy_reads} healthy reads, server VmHWM "
        f"{vm_hwm_mb(swept.server.process.pid):.0f} MB"
    )
    for rel in sorted(swept.outcomes):
        print(f"  {rel:32} {swept.outcomes[rel]}")


def test_hostile_file_rewritten_while_read(tmp_path: Path) -> None:
    """A document rewritten in place, slowly, again and again while a client reads it: every
    read answers (the last good tree while the file is half-written), and the final version
    is served once the writes stop."""
    folder = tmp_path / "churn"
    write_doc(folder / "churn.docx", ["Version 0"])
    versions = []
    for i in range(1, 4):
        write_doc(tmp_path / f"v{i}.docx", [f"Version {i}"])
        versions.append((tmp_path / f"v{i}.docx").read_bytes())
    failures: list[str] = []
    reads = 0

    async def run(server: HttpServer) -> str:
        nonlocal reads
        async with connect("http", "auto", folder, url=server.url) as client:
            uri = next(iter((await _listed(client)).values()))
            # Version 0 is extracted before the rewrites start: they are read against a last
            # good version (the first read would otherwise wait for the worker to start).
            await settled(client, uri.split("/")[2])
            writing = True

            async def rewrite() -> None:
                nonlocal writing
                for data in versions * 2:
                    with (folder / "churn.docx").open("r+b") as f:
                        f.truncate(0)
                        for at in range(0, len(data), 4096):
                            f.write(data[at : at + 4096])
                            f.flush()
                            await anyio.sleep(0.01)
                    await anyio.sleep(0.3)
                writing = False

            async with anyio.create_task_group() as tg:
                tg.start_soon(rewrite)
                while writing:
                    try:
                        await _text(client, f"{uri}/pages/0")
                        reads += 1
                    except Exception as exc:  # recorded, asserted below
                        failures.append(repr(exc))
                    await anyio.sleep(0.05)
            with anyio.fail_after(30):
                while True:
                    text = await _text(client, f"{uri}/pages/0")
                    if "Version 3" in text:
                        return text
                    await anyio.sleep(0.2)

    with http_server(folder) as server:
        final = anyio.run(run, server, backend="asyncio")
    print(
        f"\nrewritten while read: {reads} reads, {len(failures)} failed", *failures[:3], sep="\n  "
    )
    assert failures == []
    assert reads > 5
    assert "Version 3" in final
