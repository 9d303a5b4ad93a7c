"""SIGTERM -> exit of `dpe-server serve`, a real process on a settled (indexed, watched) folder.

    .venv/bin/python bench/shutdown.py [--runs 5] [--signal TERM|INT]

Per case, the server is started, the test waits for its start-up line (the folder is
indexed and the watcher running), then for `stdio` with its stdin left open (a client still
connected), for `http` with a handshake-era client holding its event stream open, and is
sent the signal. Prints, per case, the exit statuses seen and the median and maximum time
from the signal to the process's exit.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import anyio
from mcp.shared.exceptions import MCPDeprecationWarning

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e.harness import connect, free_port, make_folder, server_args, wait_for  # noqa: E402


def _started(log: Path) -> str | None:
    found = re.search(r"dpe-server: serving .* on (\S+)", log.read_text(errors="replace"))
    return found.group(1) if found else None


def one(folder: Path, transport: str, signum: int) -> tuple[int, float]:
    """(exit status, seconds from the signal (or the end of stdin) to the exit)."""
    log = folder.parent / "server.log"
    args = server_args(folder, "--transport", transport, "--port", str(free_port()))
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, *args], stdin=subprocess.PIPE, stderr=out, cwd=ROOT
        )
    try:
        where = wait_for(lambda: _started(log), "the start-up line")

        async def signalled() -> float:
            if transport == "stdio":
                return _signal(proc, signum)
            async with connect("http", "legacy", folder, url=where) as client:
                await client.list_resources()
                start = _signal(proc, signum)
                while proc.poll() is None:
                    await anyio.sleep(0.005)
                return start

        start = anyio.run(signalled)
        status = proc.wait(60)
        return status, time.monotonic() - start
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _signal(proc: subprocess.Popen[bytes], signum: int) -> float:
    """Send `signum`, or close the server's stdin when it is 0 (the client went away)."""
    start = time.monotonic()
    if signum:
        proc.send_signal(signum)
    elif proc.stdin is not None:
        proc.stdin.close()
    return start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--signal", choices=("TERM", "INT", "EOF"), default="TERM")
    args = parser.parse_args()
    signum = int(getattr(signal, f"SIG{args.signal}", 0))  # EOF: stdin closed, stdio only
    warnings.simplefilter("ignore", MCPDeprecationWarning)
    print(f"{args.signal}, {args.runs} runs per case, {os.cpu_count()} CPUs")
    for transport in ("stdio", "http") if signum else ("stdio",):
        times: list[float] = []
        statuses: set[int] = set()
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory() as scratch:
                status, seconds = one(make_folder(Path(scratch) / "docs"), transport, signum)
            statuses.add(status)
            times.append(seconds)
        print(
            f"{transport:5}  exit {sorted(statuses)}  median {statistics.median(times):.2f} s"
            f"  max {max(times):.2f} s"
        )


if __name__ == "__main__":
    main()
