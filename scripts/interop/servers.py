"""The server under test: its documents folder and its process (stdio command or HTTP)."""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from installs import CACHE, ROOT

PAGE_SIZE = 5
"""Small, so that resources/list of the fixtures takes several pages."""
DEBOUNCE_MS = 100


def server_python() -> Path:
    """The project's own virtualenv (made by `dev.py`), else the python running this."""
    venv = ROOT / ".venv" / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    return venv if venv.exists() else Path(sys.executable)


@cache
def _supports(option: str) -> bool:
    done = subprocess.run(
        [str(server_python()), "-m", "dpe_server", "serve", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    return option in done.stdout


def serve_command(folder: Path, *extra: str) -> list[str]:
    """`dpe-server serve folder` with a small page size and no persistent cache."""
    hermetic = ["--no-cache"] if _supports("--no-cache") else []
    return [
        str(server_python()),
        "-m",
        "dpe_server",
        "serve",
        str(folder),
        "--page-size",
        str(PAGE_SIZE),
        "--debounce-ms",
        str(DEBOUNCE_MS),
        *hermetic,
        *extra,
    ]


@cache
def built_fixtures() -> Path:
    """fixtures/build.py run once into a temporary folder (removed at exit)."""
    out = Path(tempfile.mkdtemp(prefix="dpe-interop-fixtures-"))
    atexit.register(shutil.rmtree, out, True)
    subprocess.run(
        [str(server_python()), str(ROOT / "fixtures" / "build.py"), str(out)],
        check=True,
        cwd=ROOT,
        timeout=300,
    )
    return out


@contextlib.contextmanager
def documents() -> Iterator[Path]:
    """A fresh copy of the built fixtures, which a part may edit."""
    folder = Path(tempfile.mkdtemp(prefix="dpe-interop-docs-")) / "docs"
    shutil.copytree(built_fixtures(), folder)
    try:
        yield folder
    finally:
        shutil.rmtree(folder.parent, ignore_errors=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class HttpServer:
    url: str
    folder: Path


@contextlib.contextmanager
def http_server(folder: Path, token: str = "") -> Iterator[HttpServer]:
    """`dpe-server serve --transport http` on a free loopback port, until the block ends;
    requiring `token` as its bearer token when given (`DPE_SERVER_TOKEN`, as the README)."""
    port = free_port()
    env = {**os.environ, "DPE_SERVER_TOKEN": token} if token else None
    logs = CACHE / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    with (logs / "server-http.log").open("ab") as log:
        proc = subprocess.Popen(
            serve_command(folder, "--transport", "http", "--port", str(port)),
            stdout=subprocess.DEVNULL,
            stderr=log,
            cwd=ROOT,
            env=env,
        )
        try:
            deadline = time.monotonic() + 60
            while True:
                if proc.poll() is not None:
                    raise RuntimeError(f"the server exited ({proc.returncode}); see {log.name}")
                if time.monotonic() > deadline:
                    raise RuntimeError("the server did not listen within 60 s")
                with contextlib.suppress(OSError):
                    socket.create_connection(("127.0.0.1", port), 0.2).close()
                    break
                time.sleep(0.05)
            yield HttpServer(f"http://127.0.0.1:{port}/mcp", folder)
        finally:
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
