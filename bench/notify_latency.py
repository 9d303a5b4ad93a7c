"""File saved -> `notifications/resources/updated` received, through the real server process.

    .venv/bin/python bench/notify_latency.py [--edits 50] [--runs 1] [--debounce-ms 150]
                                             [--combos stdio-legacy,stdio-auto,http-legacy]

A folder of a few Word documents is served by `dpe-server serve` (a subprocess: stdio, or
streamable HTTP on loopback); an SDK 2.x client subscribes to one document's Level 1 URI
(handshake era: `resources/subscribe`; 2026 era, `mode="auto"`: `subscriptions/listen`) and
the document is saved again `--edits` times, each save a new file moved into place (as an
editor saves), alternating two contents so that every save is a real change. The latency of
one edit is the time from the moment the save is complete to the moment the client holds the
notification; it includes the watcher's debounce, the rescan, the re-extraction of the file
(the server announces `updated` once the new tree is ready) and the transport.

Prints the debounce used and p50 / p95 / max per combination; with --runs N, the median of
the runs' figures. Target: p95 under 1 s.

With `--store postgresql://…` (http combinations only), two replicas serve the folder sharing
that store: the edit is seen by replica A's watcher, the client is connected to replica B,
which runs `--no-watch` and hears of it through the store's change feed (issue 22).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPDeprecationWarning

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e.harness import http_server, server_args, settled, write_doc  # noqa: E402

COMBOS = ("stdio-legacy", "stdio-auto", "http-legacy", "http-auto")
GAP = 0.25
"""Quiet time after each notification before the next save, so saves are separate bursts."""


def serve_args(folder: Path, debounce_ms: int) -> list[str]:
    return server_args(folder, "--debounce-ms", str(debounce_ms))


@contextlib.asynccontextmanager
async def client_for(
    transport: str, mode: str, folder: Path, debounce_ms: int, handler: Any, *, store: str = ""
) -> AsyncIterator[Client]:
    """A client of a server of `folder`; with `store`, of the second of two replicas."""
    with contextlib.ExitStack() as stack:
        target: Any
        if transport == "http" and store:
            options = ("--debounce-ms", str(debounce_ms), "--store", store)
            stack.enter_context(http_server(folder, *options))  # A: watches the folder
            target = stack.enter_context(http_server(folder, *options, "--no-watch")).url
        elif transport == "http":
            server = stack.enter_context(http_server(folder, "--debounce-ms", str(debounce_ms)))
            target = server.url
        else:
            target = StdioServerParameters(
                command=sys.executable, args=serve_args(folder, debounce_ms)
            )
        async with Client(
            target, mode=mode, message_handler=handler, read_timeout_seconds=60
        ) as client:
            yield client


class Arrivals:
    """`updated` notifications as they arrive: (perf_counter time, uri)."""

    def __init__(self) -> None:
        self.items: list[tuple[float, str]] = []

    async def handler(self, message: Any) -> None:
        if getattr(message, "method", "") == "notifications/resources/updated":
            self.items.append((time.perf_counter(), str(message.params.uri)))

    async def next_after(self, uri: str, since: float, timeout: float = 30.0) -> float:
        with anyio.fail_after(timeout):
            while True:
                for at, got in self.items:
                    if got == uri and at >= since:
                        self.items.clear()
                        return at
                await anyio.sleep(0.002)


def contents(tmp: Path) -> list[bytes]:
    """Two versions of one document, as bytes, to save alternately."""
    out = []
    for n, extra in enumerate((["Intro", "Details"], ["Intro", "Details", "Changed"])):
        path = tmp / f"v{n}.docx"
        write_doc(path, [*extra, *(f"Section {i}" for i in range(8))])
        out.append(path.read_bytes())
    return out


def save(path: Path, data: bytes, scratch: Path) -> float:
    """Write `data` beside nothing the server watches, move it in place; returns when done."""
    tmp = scratch / "saving.docx"
    tmp.write_bytes(data)
    os.replace(tmp, path)
    return time.perf_counter()


async def one_run(combo: str, edits: int, debounce_ms: int, store: str = "") -> list[float]:
    transport, mode = combo.split("-")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        folder, scratch = tmp / "docs", tmp / "scratch"
        scratch.mkdir()
        versions = contents(scratch)
        for i in range(3):
            (folder / f"other-{i}.docx").parent.mkdir(parents=True, exist_ok=True)
            (folder / f"other-{i}.docx").write_bytes(versions[i % 2])
        target = folder / "edited.docx"
        target.write_bytes(versions[0])
        arrivals = Arrivals()
        async with client_for(
            transport, mode, folder, debounce_ms, arrivals.handler, store=store
        ) as client:
            listed = await client.list_resources()
            uri = next(r.uri for r in listed.resources if r.uri.rsplit("/", 1)[-1].startswith("ed"))
            await settled(client, uri.split("/")[2])
            if mode == "legacy":
                with warnings.catch_warnings():  # the handshake era's subscribe is the point
                    warnings.simplefilter("ignore", MCPDeprecationWarning)
                    await client.subscribe_resource(uri)
                return await edit_loop(
                    target, versions, scratch, uri=uri, arrivals=arrivals, edits=edits
                )
            latencies: list[float] = []
            async with (
                client.listen(resource_subscriptions=[uri]) as sub,
                anyio.create_task_group() as tg,
            ):

                async def pump() -> None:
                    async for event in sub:
                        at = time.perf_counter()
                        arrivals.items.append((at, str(getattr(event, "uri", ""))))

                tg.start_soon(pump)
                latencies = await edit_loop(
                    target, versions, scratch, uri=uri, arrivals=arrivals, edits=edits
                )
                tg.cancel_scope.cancel()
        return latencies


async def edit_loop(
    target: Path, versions: list[bytes], scratch: Path, *, uri: str, arrivals: Arrivals, edits: int
) -> list[float]:
    latencies = []
    for n in range(edits):
        arrivals.items.clear()
        saved = save(target, versions[(n + 1) % 2], scratch)
        at = await arrivals.next_after(uri, saved)
        latencies.append(at - saved)
        await anyio.sleep(GAP)
    return latencies


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edits", type=int, default=50)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--debounce-ms", type=int, default=150, help="the server's default")
    parser.add_argument("--combos", default="stdio-legacy,stdio-auto,http-legacy")
    parser.add_argument("--store", default="", help="two replicas sharing this store (http)")
    args = parser.parse_args()
    combos = [c for c in args.combos.split(",") if c in COMBOS]
    step = min(50, args.debounce_ms)  # as dpe_server/watcher.py sets watchfiles' step
    print(
        f"watcher: debounce {args.debounce_ms} ms (--debounce-ms: a burst of changes is handed "
        f"on at most this long after it starts), step {step} ms (a burst ends after this much "
        f"quiet); {args.edits} saves per run, {args.runs} run(s) per combination; latencies in "
        "ms (median over runs)"
    )
    print(f"{'combination':<14}{'p50':>8}{'p95':>8}{'max':>8}{'min':>8}")
    for combo in combos:
        runs = [
            anyio.run(one_run, combo, args.edits, args.debounce_ms, args.store)
            for _ in range(args.runs)
        ]
        row = [
            statistics.median(f(r) for r in runs) * 1000
            for f in (
                lambda r: percentile(r, 0.5),
                lambda r: percentile(r, 0.95),
                max,
                min,
            )
        ]
        print(f"{combo:<14}" + "".join(f"{v:>8.0f}" for v in row), flush=True)


if __name__ == "__main__":
    main()
