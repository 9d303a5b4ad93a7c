"""The folder at scale (issue 21): how each serving figure grows from 1,000 documents.

    .venv/bin/python bench/scale.py --sizes 1000,10000            # cold, then warm figures
    .venv/bin/python bench/scale.py --sizes 100000 --listed-only   # what needs no extraction

For each size N, the folder of `many.folder(N)` (a quarter of each format, nested folders,
built once under `bench/out/`) is served by a real `dpe-server serve` process (stdio, the SDK
Client; `serving._params`):

- cold (a fresh cache under `bench/out/cache-scale-N`; skipped when that cache was completed
  before, its figures read back from `scale-N-cold.json`, unless `--cold`): seconds from the
  process start to the first Level 0 read listing every document ("cold listing": a read of one
  document whose `total_count` is N), and to the first Level 0 read (whole) with no `indexing`
  flag ("full extraction"; polled through the search tool's `indexing` until it says none is
  left, so that the polls cost the server nothing that grows with the folder); the CPU
  seconds of the serving process and its worker processes by then (/proc: their own times,
  and those of workers already reaped), so the throughput is documents per CPU second, i.e.
  per core. The state is polled every `--poll` seconds, so the times are at most that late.
- warm (`--warm-runs` restarts on that cache): seconds from the process start to the first
  moment the server has all of Level 0 to give with no `indexing` flag (the search tool says no
  document is left to extract, and Level 0 read in pages of 100 confirms it: `_extracted`),
  against the floor measured in the same run: a fresh interpreter importing the MCP SDK's server
  (`import mcp.server.lowlevel`, `measure.whole_process`; two before each restart, the median of
  them all), which `serve` needs before it can answer `initialize`; and the CPU seconds of each
  (the server's by then, the interpreter's), which the machine's load weighs on less.
  `--warm-only` stops there.
- on the last warm server, settled: its VmRSS minus an empty folder's server's, per document,
  right after the whole Level 0 read, and again after one small read (a Level 0 page of one
  document: the SDK's stdio writer keeps the last message it wrote alive until the next);
  `--calls` Level 0 page reads (`dpe://HOST?offset=K&limit=50`, K spread over the folder);
  the search and completion calls of `search_scale.searches_and_completions`; `--edits` saves
  of one docx of the folder (its bytes and another document's, alternately, moved into place
  as editors save, as `notify_latency` does), each timed to the client holding
  `notifications/resources/updated` for it (handshake-era subscription); the file's own bytes
  are put back at the end (its modification time is new, so the next start re-reads that one
  file).

`--listed-only` (for a size whose extraction does not fit in the time): the cold start only,
measured at the moment every document is listed, while the workers extract in the background:
cold listing, RSS, Level 0 page reads and completions; then the server is stopped.

Prints one Markdown table: per size, the figure (medians over runs; p50/p95 over calls), and
each size's ratio to the first size. Every figure is also written, as it is measured, to
stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402
import many  # noqa: E402  (bench/, the folder of this script, is on sys.path)
import mcp_types as types  # noqa: E402
import measure  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.shared.exceptions import MCPDeprecationWarning  # noqa: E402
from notify_latency import Arrivals, save  # noqa: E402
from search_scale import empty_rss, searches_and_completions  # noqa: E402
from serving import _level0, _params, percentile, rss_kb, server_pid  # noqa: E402

from dpe_server.catalog.folder import default_host  # noqa: E402

OUT = Path(__file__).resolve().parent / "out"
LEVEL0_PAGE = 50
"""Documents per Level 0 page read."""
LEVEL0_WHOLE_PAGE = 100
"""Documents per read when the warm restart reads all of Level 0 (`_level0_paged`)."""
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """CPU seconds of `pid` and its children: alive ones' own, reaped ones' (cutime, cstime)."""

    def times(p: int, reaped: bool) -> float:
        fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        own = int(fields[11]) + int(fields[12])
        return (own + (int(fields[13]) + int(fields[14]) if reaped else 0)) / TICKS

    total = times(pid, True)
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            try:
                total += times(int(child), True)
            except OSError:
                continue  # gone meanwhile: counted with the reaped ones next time
    return total


async def _poll(c: Client, host: str, expected: int, poll: float, start: float) -> dict[str, Any]:
    """Level 0 (one document a read: its `total_count`) until every document is listed: the
    time from `start`, and the serving process."""
    while True:
        result = await c.read_resource(f"dpe://{host}?offset=0&limit=1")
        now = time.perf_counter() - start
        item = result.contents[0]
        text = item.text if isinstance(item, types.TextResourceContents) else "{}"
        if json.loads(text).get("total_count", 0) >= expected:
            return {"listed s": now, "pid": server_pid()}
        await anyio.sleep(poll)


async def _still_indexing(c: Client) -> bool:
    """What the `search` tool says of a word found nowhere: whether documents are still
    being extracted (`catalog.indexing`, a count kept by the catalog: no folder-sized read)."""
    result = await c.call_tool("search", {"query": "zzqxjnowhere"})
    item = result.content[0]
    assert isinstance(item, types.TextContent), result.content
    return bool(json.loads(item.text)["indexing"])


async def _level0_paged(c: Client, host: str) -> list[dict]:
    """Every document of Level 0, read `LEVEL0_WHOLE_PAGE` documents at a time."""
    docs: list[dict] = []
    while True:
        result = await c.read_resource(f"dpe://{host}?offset={len(docs)}&limit={LEVEL0_WHOLE_PAGE}")
        item = result.contents[0]
        body = json.loads(item.text if isinstance(item, types.TextResourceContents) else "{}")
        docs += body["documents"]
        if not body["documents"] or len(docs) >= body["total_count"]:
            return docs


async def _extracted(
    c: Client, host: str, poll: float, start: float, *, cheap: bool = False, ready: bool = False
) -> dict[str, float]:
    """Level 0 read whole until no document is `indexing`. `cheap`: polled through the search
    tool's `indexing` first, and Level 0 read whole only once it says nothing is left: a whole
    read of 10,000 documents every `poll` seconds cost the server about a sixth of the CPU of
    extracting them (and grows with the square of the folder), which the cold figures count.

    `ready` (the warm restart): the time is that of the search tool's answer that nothing is
    left, confirmed by Level 0 read in pages of `LEVEL0_WHOLE_PAGE` (the largest `limit`)
    saying the same: the time when the server has all of Level 0 to give, not that of a client
    reading it (a single message of all of it, 50 MB at 100,000 documents, costs the SDK's
    stdio client time that grows with its square: it joins each chunk of the pipe to what it
    holds of the line and splits the whole again; 1,000 page reads cost round trips)."""
    while True:
        if (cheap or ready) and await _still_indexing(c):
            await anyio.sleep(poll)
            continue
        at = time.perf_counter() - start
        docs = await (_level0_paged(c, host) if ready else _level0(c, host))
        if not any(d.get("indexing") for d in docs):
            return {
                "settled s": at if ready else time.perf_counter() - start,
                "unreadable": sum(1 for d in docs if d.get("error")),
            }
        await anyio.sleep(poll)


async def level0_pages(c: Client, host: str, documents: int, calls: int) -> dict[str, float]:
    times = []
    for k in range(calls):
        offset = (k * 7919) % max(1, documents - LEVEL0_PAGE)
        start = time.perf_counter()
        await c.read_resource(f"dpe://{host}?offset={offset}&limit={LEVEL0_PAGE}")
        times.append((time.perf_counter() - start) * 1000)
    return {
        "Level 0 page p50 ms": statistics.median(times),
        "Level 0 page p95 ms": percentile(times, 0.95),
    }


async def cold(root: Path, cache: Path, expected: int, poll: float, listed_only: bool) -> dict:
    shutil.rmtree(cache, ignore_errors=True)
    host = default_host(root.resolve())
    log = cache.parent / f"{cache.name}.log"
    start = time.perf_counter()
    async with Client(_params(root, cache, log), mode="legacy", read_timeout_seconds=36000) as c:
        out = await _poll(c, host, expected, poll, start)
        pid = out.pop("pid")
        if listed_only:
            out["listed-only RSS KB"] = rss_kb(pid)
            out |= await level0_pages(c, host, expected, 30)
            out |= await searches_and_completions(c, host, 30, queries={})
            return out
        out |= await _extracted(c, host, poll, start, cheap=True)
        out["extraction CPU s"] = cpu_seconds(pid)
    out["documents per CPU s"] = expected / out["extraction CPU s"]
    (cache / ".complete").write_text("ok\n")
    return out


async def warm(root: Path, cache: Path, expected: int, poll: float) -> dict[str, float]:
    host = default_host(root.resolve())
    log = cache.parent / f"{cache.name}.log"
    start = time.perf_counter()
    async with Client(_params(root, cache, log), mode="legacy", read_timeout_seconds=3600) as c:
        pid = (await _poll(c, host, expected, min(poll, 0.05), start))["pid"]
        out = await _extracted(c, host, min(poll, 0.05), start, ready=True)
        out["CPU s"] = cpu_seconds(pid)  # the server's, and its workers' (none should run)
        return out


async def serving(root: Path, cache: Path, expected: int, calls: int, edits: int) -> dict:
    """The warm server's figures: RSS, Level 0 pages, search, completion, change latency."""
    host = default_host(root.resolve())
    log = cache.parent / f"{cache.name}.log"
    arrivals = Arrivals()
    params = _params(root, cache, log)
    async with Client(
        params, mode="legacy", read_timeout_seconds=3600, message_handler=arrivals.handler
    ) as c:
        await _extracted(c, host, 0.5, time.perf_counter())
        await anyio.sleep(1.0)  # the warm-up's last writes
        out: dict[str, float] = {"RSS KB": rss_kb(server_pid())}
        # The SDK's stdio writer keeps the last message it wrote (the whole Level 0 just read,
        # its JSON-RPC text) alive until it writes the next: the same after one small read.
        await c.read_resource(f"dpe://{host}?offset=0&limit=1")
        await anyio.sleep(0.5)
        out["RSS KB after a small read"] = rss_kb(server_pid())
        out |= await level0_pages(c, host, expected, calls)
        out |= await searches_and_completions(c, host, calls)
        out |= await change_latency(c, root, host, edits, arrivals)
    return out


async def change_latency(
    c: Client, root: Path, host: str, edits: int, arrivals: Arrivals
) -> dict[str, float]:
    target = root / many.relative("docx", 1)
    other = (root / many.relative("docx", 2)).read_bytes()
    original = target.read_bytes()
    docs = await _level0(c, host)
    uri = next(str(d["uri"]) for d in docs if str(d["file_uri"]).endswith("/" + target.name))
    scratch = OUT / "scale-scratch"
    scratch.mkdir(exist_ok=True)
    with warnings.catch_warnings():  # the handshake era's subscribe is the point
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        await c.subscribe_resource(uri)
    latencies = []
    try:
        for n in range(edits):
            arrivals.items.clear()
            saved = save(target, (other, original)[n % 2], scratch)
            at = await arrivals.next_after(uri, saved)
            latencies.append((at - saved) * 1000)
            await anyio.sleep(0.25)
    finally:
        if target.read_bytes() != original:
            save(target, original, scratch)
    return {
        "change to updated p50 ms": statistics.median(latencies),
        "change to updated p95 ms": percentile(latencies, 0.95),
    }


def sdk_floor(runs: int) -> list[measure.Sample]:
    """`runs` fresh interpreters importing the MCP SDK's low-level server: wall and CPU."""
    argv = [sys.executable, "-c", "import mcp.server.lowlevel"]
    return [measure.whole_process(argv) for _ in range(runs)]


async def one_size(size: int, args: argparse.Namespace) -> dict[str, float]:
    root = many.folder(OUT, size)
    cache = OUT / f"cache-scale-{size}"
    saved = OUT / f"scale-{size}-cold.json"
    figures: dict[str, float] = {}
    if args.listed_only:
        return await cold(root, cache.with_name(cache.name + "-listed"), size, args.poll, True)
    if args.cold or not (cache / ".complete").exists() or not saved.exists():
        saved.write_text(json.dumps(await cold(root, cache, size, args.poll, False)))
    figures |= json.loads(saved.read_text())
    _report(size, figures)
    warm_runs, floors = [], []
    for _ in range(args.warm_runs):  # alternated, so that the load weighs on both alike
        floors += sdk_floor(2)
        warm_runs.append(await warm(root, cache, size, args.poll))
    floor = statistics.median(f.seconds for f in floors)
    figures["warm restart s"] = statistics.median(r["settled s"] for r in warm_runs)
    figures["SDK import floor s"] = floor
    figures["warm restart minus floor s"] = figures["warm restart s"] - floor
    figures["warm restart CPU s"] = statistics.median(r["CPU s"] for r in warm_runs)
    figures["SDK import floor CPU s"] = statistics.median(f.cpu or 0.0 for f in floors)
    _report(size, figures)
    if args.warm_only:
        return figures
    figures |= await serving(root, cache, size, args.calls, args.edits)
    figures["RSS KB per document above empty"] = (figures["RSS KB"] - args.empty_kb) / size
    figures["RSS KB per document above empty, after a small read"] = (
        figures["RSS KB after a small read"] - args.empty_kb
    ) / size
    _report(size, figures)
    return figures


def _report(size: int, figures: dict[str, float]) -> None:
    print(f"{size} documents: {json.dumps(figures)}", file=sys.stderr, flush=True)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--warm-runs", type=int, default=3)
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--edits", type=int, default=20)
    parser.add_argument("--poll", type=float, default=0.5, help="seconds between Level 0 reads")
    parser.add_argument("--cold", action="store_true", help="measure the cold start again")
    parser.add_argument("--listed-only", action="store_true")
    parser.add_argument("--warm-only", action="store_true", help="no serving figures")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    OUT.mkdir(exist_ok=True)
    args.empty_kb = statistics.median([await empty_rss(OUT) for _ in range(3)])
    figures = {size: await one_size(size, args) for size in sizes}
    first = sizes[0]
    load = os.getloadavg()[0]
    print(
        f"{os.cpu_count()} CPUs, load average {load:.1f}; empty server RSS {args.empty_kb:,.0f} KB"
    )
    print(f"| figure | {' | '.join(f'{s:,} docs' for s in sizes)} | ratio to {first:,} |")
    print(f"|---|{'---|' * len(sizes)}---|")
    for key in figures[first]:
        cells = " | ".join(f"{figures[s].get(key, float('nan')):,.2f}" for s in sizes)
        base = figures[first][key]
        ratios = ", ".join(
            f"{figures[s].get(key, 0) / base:.2f}" if base else "-" for s in sizes[1:]
        )
        print(f"| {key} | {cells} | {ratios} |")


if __name__ == "__main__":
    anyio.run(main)
