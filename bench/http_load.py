"""Load on loopback: N concurrent streamable-HTTP sessions reading for a fixed time.

    .venv/bin/python bench/http_load.py [--sessions 50] [--duration 60] [--folder DIR]

Starts `dpe-server serve --transport http` as a real process on a generated folder (or
`--folder`), opens `--sessions` SDK clients (one MCP session each), and has each read a mix
of URIs (catalog, document page index, pages as JSON and Markdown, elements) back to back
until `--duration` seconds have passed; then it stops by itself. Prints requests, errors,
latency percentiles and the serving process's peak memory (VmHWM from /proc) as a table.
Exits 1 when any read failed. Not part of the test command.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402
from mcp import Client  # noqa: E402

from tests.e2e.harness import http_server, write_deck, write_doc  # noqa: E402


@dataclass
class Stats:
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def proc_status(pid: int, key: str) -> float:
    """A /proc/<pid>/status memory line (VmHWM, VmRSS) in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def make_folder(folder: Path) -> Path:
    for i in range(6):
        write_doc(folder / "docs" / f"notes-{i}.docx", [f"Part {i}.{j}" for j in range(8)])
        write_deck(folder / "decks" / f"deck-{i}.pptx", [f"Slide {i}.{j}" for j in range(6)])
    return folder


async def _uris(client: Client) -> list[str]:
    """The URIs the sessions read: the catalog, each document, its pages and elements."""
    uris: list[str] = []
    cursor: str | None = None
    while True:
        res = await (client.list_resources(cursor=cursor) if cursor else client.list_resources())
        for resource in res.resources:
            if (resource.meta or {}).get("error"):
                continue
            doc = str(resource.uri)
            uris += [doc, f"{doc}?depth=pages", f"{doc}/pages/0", f"{doc}/pages/0?format=markdown"]
            page = await client.read_resource(f"{doc}/pages/0")
            text = "".join(getattr(c, "text", "") for c in page.contents)
            if '"element_id": "' in text:
                element = text.split('"element_id": "', 1)[1].split('"', 1)[0]
                uris.append(f"{doc}/elements/{element}")
        cursor = res.next_cursor
        if not cursor:
            break
    host = uris[0].split("/")[2]
    return [f"dpe://{host}", *uris]


async def _session(url: str, uris: list[str], until: float, stats: Stats, seed: int) -> None:
    rng = random.Random(seed)
    async with Client(url, mode="legacy", read_timeout_seconds=60) as client:
        while time.monotonic() < until:
            uri = rng.choice(uris)
            start = time.perf_counter()
            try:
                await client.read_resource(uri)
            except Exception as exc:  # counted and reported, never hidden
                stats.errors.append(f"{uri}: {exc!r}"[:200])
                continue
            stats.latencies.append(time.perf_counter() - start)


async def _run(url: str, sessions: int, duration: float) -> tuple[Stats, float, int]:
    async with Client(url, mode="legacy", read_timeout_seconds=120) as probe:
        uris = await _uris(probe)  # also warms every document up
    stats = Stats()
    start = time.monotonic()
    with anyio.fail_after(duration + 120):
        async with anyio.create_task_group() as tg:
            for seed in range(sessions):
                tg.start_soon(_session, url, uris, start + duration, stats, seed)
    return stats, time.monotonic() - start, len(uris)


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def report(
    stats: Stats, elapsed: float, *, sessions: int, n_uris: int, hwm: float, rss: float
) -> str:
    lat = [x * 1000 for x in stats.latencies]
    rows: list[tuple[str, Any]] = [
        ("sessions", sessions),
        ("seconds", f"{elapsed:.1f}"),
        ("distinct URIs", n_uris),
        ("reads", len(lat)),
        ("errors", len(stats.errors)),
        ("reads/s", f"{len(lat) / elapsed:.0f}"),
        ("p50 ms", f"{_pct(lat, 0.50):.1f}"),
        ("p90 ms", f"{_pct(lat, 0.90):.1f}"),
        ("p99 ms", f"{_pct(lat, 0.99):.1f}"),
        ("max ms", f"{max(lat, default=float('nan')):.1f}"),
        ("mean ms", f"{statistics.fmean(lat) if lat else float('nan'):.1f}"),
        ("server VmHWM MB", f"{hwm:.0f}"),
        ("server VmRSS MB", f"{rss:.0f}"),
    ]
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of reading")
    parser.add_argument("--folder", type=Path, help="serve this folder instead of a generated one")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.folder or make_folder(Path(tmp) / "load")
        with http_server(folder, "--page-size", "100", "--max-sessions", "200") as server:
            stats, elapsed, n_uris = anyio.run(_run, server.url, args.sessions, args.duration)
            pid = server.process.pid
            hwm, rss = proc_status(pid, "VmHWM"), proc_status(pid, "VmRSS")
    print(report(stats, elapsed, sessions=args.sessions, n_uris=n_uris, hwm=hwm, rss=rss))
    for error in stats.errors[:5]:
        print("error:", error, file=sys.stderr)
    return 1 if stats.errors else 0


if __name__ == "__main__":
    sys.exit(main())
