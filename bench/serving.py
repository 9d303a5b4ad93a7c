"""Measurements of a real serving process: `dpe-server serve DIR` over stdio, with the SDK Client.

- `cold_and_warm`: from process start to the first complete Level 0 read (every document
  listed), and to the first Level 0 read with no `indexing` flag (every document extracted),
  with a fresh cache; then a restart on the same cache; the server's resident size (VmRSS) after
  each.
- `latency`: Level 2 reads of cached pages against reads of a trivial in-memory resource on the
  same server (`serve_trivial.py`), alternated, one at a time.
"""

from __future__ import annotations

import json
import shutil
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
import mcp_types as types
from mcp import Client, StdioServerParameters

from dpe_server.catalog.folder import default_host

HERE = Path(__file__).resolve().parent
TRIVIAL_URI = "bench://trivial"


@dataclass
class ServeRun:
    listed: float
    """Seconds from process start to a Level 0 read listing every document."""
    settled: float
    """Seconds from process start to a Level 0 read with no `indexing` flag."""
    rss_kb: int
    """The serving process's VmRSS once settled."""
    documents: int
    errors: int


def _params(
    root: Path, cache: Path, log: Path, script: Path | None = None, extra: Sequence[str] = ()
) -> StdioServerParameters:
    """The server command (with the `extra` options), its stderr (banner, logs) sent to `log`
    so the table stays clean."""
    entry = [str(script)] if script else ["-m", "dpe_server"]
    argv = [sys.executable, *entry, "serve", str(root), "--cache-dir", str(cache), *extra]
    return StdioServerParameters(
        command="/bin/sh", args=["-c", f'exec "$@" 2>>"{log}"', "sh", *argv]
    )


def _children() -> list[int]:
    pids: list[int] = []
    for task in Path("/proc/self/task").iterdir():
        text = (task / "children").read_text().split()
        pids += [int(p) for p in text]
    return pids


def server_pid() -> int:
    for pid in _children():
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if "serve" in cmd and ("dpe_server" in cmd or "serve_trivial" in cmd):
            return pid
    raise RuntimeError("the server process was not found")


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def _text(result: types.ReadResourceResult) -> str:
    item = result.contents[0]
    assert isinstance(item, types.TextResourceContents)
    return item.text


async def _level0(client: Client, host: str) -> list[dict[str, object]]:
    docs: list[dict[str, object]] = json.loads(_text(await client.read_resource(f"dpe://{host}")))[
        "documents"
    ]
    return docs


async def serve_once(root: Path, cache: Path, expected: int, settle_s: float = 1.5) -> ServeRun:
    """Start a server, poll Level 0 until every document is listed and then extracted."""
    host = default_host(root.resolve())
    log = cache.parent / f"{cache.name}.log"
    start = time.perf_counter()
    listed = 0.0
    async with Client(_params(root, cache, log), mode="legacy", read_timeout_seconds=600) as c:
        while True:
            docs = await _level0(c, host)
            now = time.perf_counter() - start
            if len(docs) >= expected and not listed:
                listed = now
            if listed and not any(d.get("indexing") for d in docs):
                settled = now
                break
            await anyio.sleep(0.02)
        await anyio.sleep(settle_s)  # let the warm-up's last writes and announcements finish
        rss = rss_kb(server_pid())
        errors = sum(1 for d in docs if d.get("error"))
    return ServeRun(listed, settled, rss, len(docs), errors)


async def cold_and_warm(
    root: Path, scratch: Path, expected: int, runs: int
) -> tuple[list[ServeRun], list[ServeRun]]:
    """`runs` cold starts (each on a fresh cache), each followed by a warm restart on it."""
    cold: list[ServeRun] = []
    warm: list[ServeRun] = []
    for i in range(runs):
        cache = scratch / f"cache-{root.name}-{i}"
        shutil.rmtree(cache, ignore_errors=True)
        cold.append(await serve_once(root, cache, expected))
        warm.append(await serve_once(root, cache, expected))
    return cold, warm


@dataclass
class Latency:
    page_ms: list[float]
    hot_ms: list[float]
    trivial_ms: list[float]
    distinct_pages: int


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def latency(root: Path, cache: Path, reads: int, distinct: int) -> Latency:
    """Alternate a Level 2 read of a cached page with a read of the trivial resource.

    `distinct` pages are read in a cycle: more than the server's in-memory page LRU (256), so
    each read loads the page from the persistent cache (SQLite), the common case; `hot` reads
    repeat one page (served from the LRU).
    """
    host = default_host(root.resolve())
    log = cache.parent / f"{cache.name}.latency.log"
    params = _params(root, cache, log, HERE / "serve_trivial.py")
    async with Client(params, mode="legacy", read_timeout_seconds=600) as c:
        while True:
            docs = await _level0(c, host)
            if docs and not any(d.get("indexing") for d in docs):
                break
            await anyio.sleep(0.1)
        uris = [
            f"dpe://{host}/{d['doc_ref']}/pages/{i}"
            for d in docs
            if not d.get("error")
            for i in range(int(str(d["page_count"])))
        ]
        step = max(1, len(uris) // distinct)
        uris = uris[::step][:distinct]
        for uri in uris:  # every page read once: extracted and cached
            await c.read_resource(uri)
        out = Latency([], [], [], len(uris))
        for k in range(reads):
            for target, sink in (
                (TRIVIAL_URI, out.trivial_ms),
                (uris[k % len(uris)], out.page_ms),
                (uris[0], out.hot_ms),
            ):
                t0 = time.perf_counter()
                await c.read_resource(target)
                sink.append((time.perf_counter() - t0) * 1000)
    return out


def median(values: list[float]) -> float:
    return statistics.median(values)
