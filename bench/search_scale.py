"""Search, completion and memory at 1,000 and 10,000 documents (issue 21, item 4).

    .venv/bin/python bench/search_scale.py [--sizes 1000,10000] [--runs 3] [--calls 30]

For each size, the generated folder of `gen.folder` (a quarter of each format, small documents)
is served by a real `dpe-server serve` process (stdio, SDK Client) on its own cache under
`bench/out/` (the first run extracts every document, later runs restart on the cache). Once
every document is extracted (Level 0 without `indexing`), it measures, one call at a time:

- `search` tool calls, `--calls` of each query kind (a common word, two words, a phrase, a
  prefix, a word found nowhere, a common word in one file type, in one category), wall time
  from the client;
- `completion/complete` of `doc_ref` by a prefix (paced under the server's completion rate);
- the serving process's VmRSS, and that of a server of an empty folder: (RSS - empty) / documents.

Prints one Markdown table: per size, medians over `--runs` runs of each figure, and the ratio of
the largest size to the smallest.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402
import gen  # noqa: E402  (bench/, the folder of this script, is on sys.path)
import mcp_types as types  # noqa: E402
from mcp import Client  # noqa: E402
from serving import _level0, _params, percentile, rss_kb, server_pid  # noqa: E402

from dpe_server.catalog.folder import default_host  # noqa: E402

OUT = Path(__file__).resolve().parent / "out"
QUERIES: dict[str, dict[str, str]] = {
    "common word": {"query": "revenue"},
    "two words": {"query": "revenue margin"},
    "phrase": {"query": '"quarter forecast"'},
    "prefix": {"query": "forec*"},
    "found nowhere": {"query": "zanzibar"},
    "word, file_type": {"query": "revenue", "file_type": "docx"},
    "word, category": {"query": "revenue", "category": "table"},
}
COMPLETION_PAUSE = 0.06
"""Seconds between completions: under the server's 20 per second."""


async def _timed(call: Callable[[], Awaitable[Any]], n: int, pause: float = 0.0) -> list[float]:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        await call()
        times.append((time.perf_counter() - start) * 1000)
        await anyio.sleep(pause)
    return times


async def _settled(client: Client, host: str, expected: int) -> int:
    """Wait until every document is listed and extracted; how many failed."""
    while True:
        docs = await _level0(client, host)
        if len(docs) >= expected and not any(d.get("indexing") for d in docs):
            return sum(1 for d in docs if d.get("error"))
        await anyio.sleep(1.0)


async def one_run(root: Path, cache: Path, expected: int, calls: int) -> dict[str, float]:
    host = default_host(root.resolve())
    log = cache.parent / f"{cache.name}.log"
    out: dict[str, float] = {}
    async with Client(_params(root, cache, log), mode="legacy", read_timeout_seconds=3600) as c:
        start = time.perf_counter()
        out["unreadable"] = await _settled(c, host, expected)
        out["settle s"] = time.perf_counter() - start
        await anyio.sleep(1.0)  # the warm-up's last writes
        out["rss KB"] = rss_kb(server_pid())
        out |= await searches_and_completions(c, host, calls)
    return out


async def searches_and_completions(
    c: Client, host: str, calls: int, queries: dict[str, dict[str, str]] = QUERIES
) -> dict[str, float]:
    """`calls` search tool calls of each of `queries`, then `calls` completions of doc_ref:
    p50 and p95 in ms, and each query's total."""
    out: dict[str, float] = {}
    for kind, args in queries.items():

        async def search(args: dict[str, str] = args, kind: str = kind) -> None:
            result = await c.call_tool("search", args)
            assert not result.is_error, result.content
            item = result.content[0]
            assert isinstance(item, types.TextContent)
            out[f"hits: {kind}"] = json.loads(item.text)["total"]

        times = await _timed(search, calls)
        out[f"search p50 ms: {kind}"] = statistics.median(times)
        out[f"search p95 ms: {kind}"] = percentile(times, 0.95)
    ref = types.ResourceTemplateReference(
        type="ref/resource", uri=f"dpe://{host}/{{doc_ref}}/pages/{{page_index}}"
    )
    prefixes = ["x", "pdf-0", "docx-1", "pptx-00", "xlsx-012", "d", "p"]

    async def complete() -> None:
        prefix = prefixes[len(done) % len(prefixes)]
        done.append(prefix)
        await c.complete(ref, {"name": "doc_ref", "value": prefix})

    done: list[str] = []
    times = await _timed(complete, calls, COMPLETION_PAUSE)
    out["completion p50 ms"] = statistics.median(times)
    out["completion p95 ms"] = percentile(times, 0.95)
    return out


async def empty_rss(scratch: Path) -> int:
    root = scratch / "empty-folder"
    root.mkdir(parents=True, exist_ok=True)
    cache = scratch / "cache-empty"
    async with Client(_params(root, cache, scratch / "empty.log"), mode="legacy") as c:
        await c.list_resources()
        await anyio.sleep(1.0)
        return rss_kb(server_pid())


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--calls", type=int, default=30)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    OUT.mkdir(exist_ok=True)
    empty = statistics.median([await empty_rss(OUT) for _ in range(args.runs)])
    figures: dict[int, dict[str, float]] = {}
    for size in sizes:
        root = gen.folder(OUT, size // 4)
        runs = [
            await one_run(root, OUT / f"cache-search-{size}", size, args.calls)
            for _ in range(args.runs)
        ]
        figures[size] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        figures[size]["RSS KB per document above empty"] = (figures[size]["rss KB"] - empty) / size
        print(f"{size} documents: {json.dumps(figures[size])}", file=sys.stderr, flush=True)
    small, large = sizes[0], sizes[-1]
    print(f"empty server RSS {empty:,.0f} KB; medians of {args.runs} runs, {args.calls} calls each")
    print(f"| figure | {' | '.join(f'{s:,} docs' for s in sizes)} | {large:,}/{small:,} |")
    print(f"|---|{'---|' * len(sizes)}---|")
    for key in figures[small]:
        cells = " | ".join(f"{figures[s][key]:,.2f}" for s in sizes)
        ratio = figures[large][key] / figures[small][key] if figures[small][key] else 0.0
        print(f"| {key} | {cells} | {ratio:.2f} |")


if __name__ == "__main__":
    anyio.run(main)
