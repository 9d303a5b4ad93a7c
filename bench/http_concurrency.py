"""Concurrent HTTP clients reading pages: requests per second, latency percentiles, errors.

    .venv/bin/python bench/http_concurrency.py [--clients 20] [--seconds 10] [--runs 3]
                                               [--client raw|sdk]

`dpe-server serve --transport http` (a subprocess, loopback) serves the documents that
fixtures/build.py writes (xlsx, pdf, pptx, docx). `--clients` clients, each with its own HTTP
connection and MCP session (handshake era), connect; then for `--seconds` each reads Level 2
pages in a loop: every page of every readable document, in turn in json, markdown and text,
each client starting at a different place. `--client raw` (default) is a bare JSON-RPC
client (httpx), so the figures are the server's; `--client sdk` uses the SDK 2.x `Client`,
whose own cost per request is then part of the figures. Before the clock starts every page is
read once, so the figures are of serving pages, not of first extraction. Everything is
bounded: loopback only, a fixed duration, then the server is stopped.

Prints one row per run and the median row: requests, requests/s, p50, p99, max latency,
errors (any exception or error result; the target is zero), the CPU use of the server process
and of this (client) process over the window (100% = one core busy; clients and server share
the machine's cores), and the server's CPU time per request (ms), which depends much less on
how busy the machine is than the rest.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Protocol

import anyio
import httpx2
from mcp import Client

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e.harness import http_server  # noqa: E402

FORMATS = ("json", "markdown", "text")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process, from /proc (0 where /proc is absent)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def page_uris(url: str) -> list[str]:
    """Every Level 2 page of every readable document, in the three formats, interleaved."""
    async with Client(url, mode="legacy", read_timeout_seconds=120) as client:
        docs, cursor = [], None
        while True:
            listed = await client.list_resources(cursor=cursor)
            docs += listed.resources
            cursor = listed.next_cursor
            if not cursor:
                break
        pages = [
            f"{d.uri}/pages/{i}"
            for d in docs
            if d.meta and "error" not in d.meta
            for i in range(int(d.meta.get("page_count", 0)))
        ]
        uris = [f"{p}?format={FORMATS[n % 3]}" for n, p in enumerate(pages)]
        for uri in uris:  # warm up: extraction is not what is measured
            await client.read_resource(uri)
        return uris


@dataclass
class Tally:
    latencies: list[float]
    errors: int = 0


class Reader(Protocol):
    async def read(self, uri: str) -> bool: ...


@contextlib.asynccontextmanager
async def sdk_reader(url: str) -> AsyncIterator[Reader]:
    """An SDK 2.x `Client` (handshake era): what an MCP host runs."""

    class SdkReader:
        async def read(self, uri: str) -> bool:
            result = await client.read_resource(uri)
            return bool(result.contents)

    async with Client(url, mode="legacy", read_timeout_seconds=60) as client:
        yield SdkReader()


@contextlib.asynccontextmanager
async def raw_reader(url: str) -> AsyncIterator[Reader]:
    """A bare JSON-RPC client: its own connection and MCP session, almost no client cost."""
    headers = {"accept": "application/json, text/event-stream"}
    async with httpx2.AsyncClient(timeout=60, headers=headers) as http:
        hello = {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": RAW_CLIENT}
        response = await http.post(url, json=rpc("initialize", hello, 0))
        response.raise_for_status()
        http.headers["mcp-session-id"] = response.headers["mcp-session-id"]
        http.headers["mcp-protocol-version"] = PROTOCOL
        await http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        counter = iter(range(1, 1 << 62))

        class RawReader:
            async def read(self, uri: str) -> bool:
                response = await http.post(
                    url, json=rpc("resources/read", {"uri": uri}, next(counter))
                )
                if response.status_code != 200:
                    return False
                message = _message(response)
                return bool(message.get("result", {}).get("contents"))

        yield RawReader()


PROTOCOL = "2025-06-18"
RAW_CLIENT = {"name": "http-concurrency-bench", "version": "1"}


def rpc(method: str, params: dict[str, Any], ident: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "method": method, "params": params}


def _message(response: httpx2.Response) -> dict[str, Any]:
    """The JSON-RPC message of a response, whether sent as JSON or as one SSE event."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [ln[5:].strip() for ln in response.text.splitlines() if ln.startswith("data:")]
        found: dict[str, Any] = json.loads(data[-1]) if data else {}
        return found
    parsed: dict[str, Any] = response.json()
    return parsed


READERS = {"raw": raw_reader, "sdk": sdk_reader}


async def worker(
    url: str,
    uris: list[str],
    start: int,
    *,
    kind: str,
    clock: Clock,
    tally: Tally,
    ready: anyio.Event,
) -> None:
    async with READERS[kind](url) as reader:
        clock.connected += 1
        await ready.wait()
        n = start
        while time.perf_counter() < clock.until:
            uri = uris[n % len(uris)]
            n += 1
            began = time.perf_counter()
            try:
                ok = await reader.read(uri)
            except Exception:  # every failure counts as an error; the run goes on
                ok = False
            if ok:
                tally.latencies.append(time.perf_counter() - began)
            else:
                tally.errors += 1


@dataclass
class Clock:
    until: float = 0.0
    connected: int = 0


async def one_run(
    url: str, pid: int, uris: list[str], clients: int, *, seconds: float, kind: str
) -> dict[str, float]:
    """Connect every client, then let them all read for `seconds`."""
    tally, clock, ready = Tally([]), Clock(), anyio.Event()
    async with anyio.create_task_group() as tg:
        for c in range(clients):
            first = c * len(uris) // clients
            tg.start_soon(
                partial(worker, url, uris, first, kind=kind, clock=clock, tally=tally, ready=ready)
            )
        with anyio.fail_after(120):
            while clock.connected < clients:
                await anyio.sleep(0.01)
        cpu0, wall0 = cpu_seconds(pid), time.perf_counter()
        mine0 = time.process_time()
        clock.until = wall0 + seconds
        ready.set()
    wall = time.perf_counter() - wall0
    cpu, mine = cpu_seconds(pid) - cpu0, time.process_time() - mine0
    lat = sorted(tally.latencies)
    return {
        "requests": len(lat),
        "rps": len(lat) / wall,
        "p50": lat[len(lat) // 2] * 1000 if lat else 0.0,
        "p99": lat[min(len(lat) - 1, int(0.99 * len(lat)))] * 1000 if lat else 0.0,
        "max": lat[-1] * 1000 if lat else 0.0,
        "errors": tally.errors,
        "cpu": 100 * cpu / wall,
        "client_cpu": 100 * mine / wall,
        "cpu_ms": 1000 * cpu / len(lat) if lat else 0.0,
    }


def row(label: str, r: dict[str, float]) -> str:
    return (
        f"{label:<8}{r['requests']:>9.0f}{r['rps']:>8.0f}{r['p50']:>8.0f}{r['p99']:>8.0f}"
        f"{r['max']:>8.0f}{r['errors']:>7.0f}{r['cpu']:>9.0f}%{r['client_cpu']:>10.0f}%{r['cpu_ms']:>12.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--client",
        choices=sorted(READERS),
        default="raw",
        help="raw: bare JSON-RPC over HTTP (measures the server); sdk: the SDK's Client",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "docs"
        subprocess.run(
            [sys.executable, str(ROOT / "fixtures" / "build.py"), str(folder)],
            check=True,
            capture_output=True,
        )
        # The serve defaults for what is measured (the harness sets test values).
        defaults = ("--page-size", "50", "--debounce-ms", "150")
        with http_server(folder, *defaults) as server:
            url, pid = server.url, server.process.pid
            uris = anyio.run(page_uris, url)
            print(
                f"{args.clients} {args.client} clients, {args.seconds:.0f} s per run, "
                f"{len(uris)} pages "
                f"(Level 2, json/markdown/text) of {len(list(folder.iterdir()))} fixture files; "
                "latencies in ms"
            )
            print(
                f"{'run':<8}{'requests':>9}{'req/s':>8}{'p50':>8}{'p99':>8}{'max':>8}"
                f"{'errors':>7}{'srv cpu':>10}{'client cpu':>11}{'srv ms/req':>12}"
            )
            runs = []
            for n in range(args.runs):
                r = anyio.run(
                    partial(
                        one_run,
                        url,
                        pid,
                        uris,
                        args.clients,
                        seconds=args.seconds,
                        kind=args.client,
                    )
                )
                runs.append(r)
                print(row(str(n + 1), r), flush=True)
            median = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
            median["errors"] = sum(r["errors"] for r in runs)
            print(row("median", median) + "   (errors: total over all runs)")


if __name__ == "__main__":
    main()
