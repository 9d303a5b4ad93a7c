"""Concurrent Level 3 reads of one big element: the serving process's peak memory, and how
long a Level 0 read waits meanwhile.

    .venv/bin/python bench/big_element.py [--clients 10,40] [--runs 5] [--file PATH]
                                          [--max-element-bytes BYTES]

The element is the one table of `xlsx/poi__poc-shared-strings.xlsx` (corpus, 109 KB on disk:
162 rows x 3 cells of 32,767 characters, a 16 MB Level 3 payload as the extractor produces
it). `dpe-server serve --transport http` (a subprocess on a free loopback port, a scratch
folder holding only that file, its cache beside it) is started afresh for every run, so each
run's peak is its own. Before the clock starts the element's page is read once (the file is
extracted and its pages cached; the element itself is not, so the burst includes rendering
it) and the serving process's peak RSS is reset (`/proc/PID/clear_refs`).
Then N clients, each with its own HTTP connection and MCP session (handshake era, bare
JSON-RPC over httpx, response bodies counted and dropped), send `resources/read` of the
element's Level 3 URI (json) at once, while one more client reads Level 0 back to back until
they are all answered.

Per run: the serving process's peak RSS (VmHWM over the burst; worker processes not
included), its RSS 2 s after the burst (what it still holds), the slowest Level 0 read during
the burst, the time until all N reads were answered, the bytes of one answer, errors. The
baselines, measured in the same run on the same server just before the burst: its RSS at
rest, and the median of 20 Level 0 reads with nothing else in flight. Prints one row per run
and a median row per N (peak: median of the runs' peaks). `--max-element-bytes` is passed to
the server (default: the server's own).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import anyio
import httpx2

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dpe_server.catalog.folder import default_host, doc_ref_for  # noqa: E402
from tests.e2e.harness import http_server  # noqa: E402

CORPUS_FILE = ROOT.parent / "shared" / "corpus" / "xlsx" / "poi__poc-shared-strings.xlsx"
ELEMENT_ID = "p0-tbl1"
PROTOCOL = "2025-06-18"
HEADERS = {"accept": "application/json, text/event-stream"}


@dataclass
class Burst:
    clients: int
    rest_mb: float
    """The serving process's RSS just before the burst."""
    peak_mb: float
    """Its peak RSS during the burst (VmHWM, reset before it)."""
    after_mb: float
    """Its RSS 2 s after the last answer."""
    idle_l0_ms: float
    """Median Level 0 read with nothing else in flight."""
    slowest_l0_ms: float
    """The slowest Level 0 read while the big reads were in flight."""
    all_s: float
    """Seconds until every big read was answered."""
    answer_bytes: int
    """Bytes of one answer to the big read (the HTTP body)."""
    errors: int


def _status(pid: int, field: str) -> float:
    """A `/proc/PID/status` field in MB (VmRSS, VmHWM)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} for {pid}")


def _reset_peak(pid: int) -> None:
    """Reset the process's VmHWM to its current RSS (Linux: `5` into clear_refs)."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")


class Session:
    """A bare JSON-RPC client with its own connection and MCP session (almost no client cost)."""

    def __init__(self, http: httpx2.AsyncClient, url: str) -> None:
        self.http, self.url, self.next_id = http, url, 1

    async def open(self) -> None:
        hello = {
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "big-element-bench", "version": "1"},
        }
        response = await self.http.post(self.url, json=self._rpc("initialize", hello))
        response.raise_for_status()
        self.http.headers["mcp-session-id"] = response.headers["mcp-session-id"]
        self.http.headers["mcp-protocol-version"] = PROTOCOL
        ready = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        await self.http.post(self.url, json=ready)

    def _rpc(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        return {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}

    async def read(self, uri: str) -> int:
        """Bytes of the answer to `resources/read` of `uri`; raises on an HTTP or RPC error."""
        request = self._rpc("resources/read", {"uri": uri})
        size, tail = 0, b""
        async with self.http.stream("POST", self.url, json=request) as response:
            if response.status_code != 200:
                raise RuntimeError(f"HTTP {response.status_code}")
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                tail = (tail + chunk)[-4096:]
        if b'"error"' in tail and b'"contents"' not in tail:
            raise RuntimeError("JSON-RPC error")
        return size


@contextlib.asynccontextmanager
async def session(url: str) -> AsyncIterator[Session]:
    async with httpx2.AsyncClient(timeout=600, headers=HEADERS) as http:
        s = Session(http, url)
        await s.open()
        yield s


async def _timed(read: Callable[[], Awaitable[int]]) -> float:
    began = time.perf_counter()
    await read()
    return (time.perf_counter() - began) * 1000


async def burst(url: str, pid: int, level0: str, element: str, clients: int) -> Burst:
    """N concurrent big reads, Level 0 read back to back meanwhile (see the module doc)."""
    page = element.split("/elements/", maxsplit=1)[0] + "/pages/0"
    async with contextlib.AsyncExitStack() as stack:
        probe = await stack.enter_async_context(session(url))
        readers = [await stack.enter_async_context(session(url)) for _ in range(clients)]
        await probe.read(page)  # extract and cache the file: extraction is not what is measured
        idle = statistics.median([await _timed(lambda: probe.read(level0)) for _ in range(20)])
        await anyio.sleep(1.0)
        rest = _status(pid, "VmRSS")
        _reset_peak(pid)
        sizes: list[int] = []
        errors = 0
        done = anyio.Event()
        slowest = 0.0

        async def big(s: Session) -> None:
            nonlocal errors
            try:
                sizes.append(await s.read(element))
            except Exception:  # every failure counts; the run goes on
                errors += 1

        async def level0_loop() -> None:
            nonlocal slowest
            while not done.is_set():
                slowest = max(slowest, await _timed(lambda: probe.read(level0)))

        began = time.perf_counter()
        async with anyio.create_task_group() as tg:
            tg.start_soon(level0_loop)
            async with anyio.create_task_group() as bigs:
                for s in readers:
                    bigs.start_soon(big, s)
            all_s = time.perf_counter() - began
            done.set()
        peak = _status(pid, "VmHWM")
        await anyio.sleep(2.0)
        after = _status(pid, "VmRSS")
    return Burst(
        clients=clients,
        rest_mb=rest,
        peak_mb=peak,
        after_mb=after,
        idle_l0_ms=idle,
        slowest_l0_ms=slowest,
        all_s=all_s,
        answer_bytes=max(sizes, default=0),
        errors=errors,
    )


def measure(
    file: Path, clients: list[int], runs: int, serve_args: tuple[str, ...] = ()
) -> dict[int, list[Burst]]:
    """`runs` bursts per client count, each on a freshly started server."""
    out: dict[int, list[Burst]] = {n: [] for n in clients}
    # The server imports this checkout's dpe_server from any working directory.
    paths = [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    with tempfile.TemporaryDirectory() as tmp, _env("PYTHONPATH", os.pathsep.join(paths)):
        folder = Path(tmp) / "big"
        folder.mkdir()
        shutil.copy2(file, folder / file.name)
        host = default_host(folder.resolve())
        level0 = f"dpe://{host}"
        element = f"dpe://{host}/{doc_ref_for(file.name)}/elements/{ELEMENT_ID}"
        for _ in range(runs):
            for n in clients:  # alternated, so load on the machine falls on every N alike
                with http_server(folder, "--max-sessions", str(n + 10), *serve_args) as server:
                    out[n].append(
                        anyio.run(burst, server.url, server.process.pid, level0, element, n)
                    )
                    print(_row(str(len(out[n])), out[n][-1]), file=sys.stderr, flush=True)
    return out


@contextlib.contextmanager
def _env(name: str, value: str) -> Iterator[None]:
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            del os.environ[name]
        else:
            os.environ[name] = old


def median_burst(bursts: list[Burst]) -> Burst:
    values: dict[str, Any] = {}
    for f in fields(Burst):
        got = [getattr(b, f.name) for b in bursts]
        values[f.name] = sum(got) if f.name == "errors" else statistics.median(got)
    values["clients"] = bursts[0].clients
    return Burst(**values)


HEAD = (
    f"{'run':<8}{'N':>4}{'rest MB':>9}{'peak MB':>9}{'after MB':>10}{'L0 idle ms':>12}"
    f"{'L0 slowest ms':>15}{'all read s':>12}{'answer MB':>11}{'errors':>8}"
)


def _row(label: str, b: Burst) -> str:
    return (
        f"{label:<8}{b.clients:>4}{b.rest_mb:>9.0f}{b.peak_mb:>9.0f}{b.after_mb:>10.0f}"
        f"{b.idle_l0_ms:>12.1f}{b.slowest_l0_ms:>15.0f}{b.all_s:>12.2f}"
        f"{b.answer_bytes / 1e6:>11.2f}{b.errors:>8}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", default="10,40", help="comma-separated client counts")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--file", type=Path, default=CORPUS_FILE)
    parser.add_argument(
        "--max-element-bytes", default="", help="passed on to the server (default: its own)"
    )
    args = parser.parse_args()
    if not args.file.exists():
        print(f"{args.file.name} is absent (the corpus is not here): nothing measured")
        return 2
    clients = [int(n) for n in args.clients.split(",") if n]
    cap = ("--max-element-bytes", args.max_element_bytes) if args.max_element_bytes else ()
    results = measure(args.file, clients, args.runs, cap)
    print(f"{args.file.name}, element {ELEMENT_ID}, {args.runs} runs per N; medians")
    print(HEAD)
    for bursts in results.values():
        for i, b in enumerate(bursts):
            print(_row(str(i + 1), b))
        print(_row("median", median_burst(bursts)) + "   (errors: total)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
