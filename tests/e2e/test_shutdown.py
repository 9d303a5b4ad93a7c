"""Stopping `dpe-server serve` (a real process) with SIGTERM or SIGINT while a file is being
parsed: exit status 0, the cache closed (its write-ahead log checkpointed and removed, so
nothing is replayed at the next start), no worker process left behind."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from dpe_server.catalog.sqlite import FILE_NAME
from tests.e2e.harness import HAS_PROC, alive, children, wait_for, write_doc

pytestmark = pytest.mark.skipif(not HAS_PROC, reason="reads the process table in /proc")

# `dpe-server` whose workers run the tests' misbehaving jobs: a file named stall* hangs its
# parse, after leaving a `stalled-<pid>` file beside the served folder.
SERVE_STALLING = (
    "import dataclasses, sys\n"
    "from dpe_server.cli import command as cli\n"
    "settings = cli._worker_settings\n"
    "runner = 'tests.hostile.runners:misbehave'\n"
    "cli._worker_settings = lambda args: dataclasses.replace(settings(args), runner=runner)\n"
    "sys.exit(cli.main())\n"
)


class _Log:
    """What a server process wrote to stdout and stderr."""

    def __init__(self) -> None:
        self.file = tempfile.TemporaryFile()  # noqa: SIM115 (closed by `serving`)
        self.output = ""

    def text(self) -> str:
        return self.output


@contextlib.contextmanager
def serving(command: list[str]) -> Iterator[tuple[subprocess.Popen[bytes], _Log]]:
    """Run `command` with its stdin held open (a stdio client still connected); on the way out
    kill it if it is still running, close its stdin and keep what it wrote."""
    log = _Log()
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=log.file, stderr=log.file)
    try:
        yield server, log
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        assert server.stdin is not None
        server.stdin.close()
        log.file.seek(0)
        log.output = log.file.read().decode("utf-8", "replace")
        log.file.close()


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_shutdown_on_signal_mid_parse(tmp_path: Path, transport: str, signum: int) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "stall.docx").write_bytes(b"PK")
    cache = tmp_path / "cache"
    command = [sys.executable, "-c", SERVE_STALLING, "serve", str(folder), "--cache-dir"]
    command += [str(cache), "--workers", "1", "--transport", transport, "--port", "0"]
    with serving(command) as (server, log):
        marker = wait_for(lambda: next(tmp_path.glob("stalled-*"), None), "a parse started")
        worker = int(marker.name.split("-")[1])
        workers = children(server.pid)
        assert worker in workers
        wal = cache / f"{FILE_NAME}-wal"
        assert wal.exists()  # the cache is open, with a write-ahead log
        server.send_signal(signum)
        status = server.wait(30)
    output = log.text()
    assert status == 0, output
    assert not wal.exists(), "the cache was not closed"
    assert [pid for pid in workers if alive(pid)] == []
    assert "Traceback" not in output


# `dpe-server` whose background work fails once the folder is indexed (a bug of ours).
SERVE_FAILING = (
    "import sys\n"
    "from dpe_server.catalog import catalog\n"
    "from dpe_server.cli import command as cli\n"
    "async def warm(self):\n"
    "    raise RuntimeError('a bug in the warm-up')\n"
    "catalog.Catalog.warm = warm\n"
    "sys.exit(cli.main())\n"
)


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_server_whose_background_work_fails_exits_with_status_1(
    tmp_path: Path, transport: str
) -> None:
    """Not up answering errors (HTTP 500 to every request, initialize included, or silence
    over stdio) with nothing to restart it: it exits, saying why, its cache closed."""
    folder = tmp_path / "docs"
    folder.mkdir()
    write_doc(folder / "notes.docx", ["Intro"])
    command = [sys.executable, "-c", SERVE_FAILING, "serve", str(folder), "--cache-dir"]
    command += [str(tmp_path / "cache"), "--transport", transport, "--port", "0"]
    with serving(command) as (server, log):
        status = server.wait(30)
    output = log.text()
    assert status == 1, output
    assert "background work failed; stopping: RuntimeError('a bug in the warm-up')" in output
    assert not (tmp_path / "cache" / f"{FILE_NAME}-wal").exists(), "the cache was not closed"
