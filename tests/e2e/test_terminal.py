"""`dpe-server` as a person meets it on a terminal (a pseudo-terminal here): what the screen
shows while and once the folder is indexed, and how fast the command stops on Ctrl-C
(SIGINT), SIGTERM or a closed stdin, with no worker process left.

The exit is timed from the moment of the signal (start-up is never counted); the bound of
1 s is the requirement itself (issue 19)."""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
import pty
import select
import signal
import subprocess
import sys
import termios
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from dpe_server.isolation.jobs import Job
from tests.e2e.harness import HAS_PROC, alive, children, make_folder, wait_for
from tests.e2e.test_shutdown import SERVE_STALLING

pytestmark = pytest.mark.skipif(
    not HAS_PROC or sys.platform == "win32", reason="pseudo-terminals and /proc"
)

DPE = [sys.executable, "-m", "dpe_server"]
EXIT_BOUND = 1.0
"""Seconds from the signal to the process's exit (issue 19)."""


class Screen:
    """The master side of a pseudo-terminal, and everything written to it so far."""

    def __init__(self, master: int) -> None:
        self.master = master
        self.output = b""

    def read_until(self, text: str, timeout: float = 60.0) -> None:
        """Read what the command writes until `text` has appeared."""
        deadline = time.monotonic() + timeout
        while text.encode() not in self.output:
            left = deadline - time.monotonic()
            if left <= 0 or not self._read(left):
                raise AssertionError(f"{text!r} not shown; the screen: {self.lines()}")

    def drain(self) -> None:
        """Read what is left once the command has exited."""
        while self._read(0.0):
            pass

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return False
        try:
            chunk = os.read(self.master, 65536)
        except OSError:  # EIO: the command exited and closed its side
            return False
        self.output += chunk
        return bool(chunk)

    def lines(self) -> list[str]:
        """The lines the terminal shows: a carriage return moves back to the line's start,
        later characters overwrite earlier ones."""
        lines: list[list[str]] = [[]]
        column = 0
        for char in self.output.decode("utf-8", "replace"):
            if char == "\r":
                column = 0
            elif char == "\n":
                lines.append([])
                column = 0
            else:
                line = lines[-1]
                if column < len(line):
                    line[column] = char
                else:
                    line.append(char)
                column += 1
        return ["".join(line) for line in lines if line]


def _take_the_terminal() -> None:
    """In the child, after setsid: make its stdout's terminal the controlling one."""
    fcntl.ioctl(1, termios.TIOCSCTTY, 0)


@contextlib.contextmanager
def terminal(
    command: list[str], stdin: int | None = None
) -> Iterator[tuple[subprocess.Popen[bytes], Screen]]:
    """`command` on a pseudo-terminal (stdin too, unless `stdin` is given), in a session of
    its own whose controlling terminal it is (so Ctrl-C typed on it is a SIGINT to the
    command and its workers, as in a shell); killed on the way out if still running."""
    master, slave = pty.openpty()
    try:
        process = subprocess.Popen(
            command,
            stdin=slave if stdin is None else stdin,
            stdout=slave,
            stderr=slave,
            start_new_session=True,
            preexec_fn=_take_the_terminal,  # noqa: PLW1509 (only an ioctl before exec)
        )
    finally:
        os.close(slave)
    try:
        yield process, Screen(master)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(master)


def _serve(folder: Path, *extra: str) -> list[str]:
    return [*DPE, "serve", str(folder), "--no-cache", "--workers", "1", *extra]


def _banner(folder: Path) -> list[str]:
    folder = folder.resolve()
    return [
        f"dpe-server: serving 4 documents from {folder} as dpe://local.dpe.docs on stdio",
        "dpe-server: 1 unreadable (1 encrypted); to list them: dpe-server read "
        f"{folder} 'dpe://local.dpe.docs?format=text'",
    ]


NEXT_STEP = (
    "dpe-server: next: an MCP client runs this command itself: add it to the client's "
    "configuration (the Claude Desktop snippet in README.md); Ctrl-C to stop"
)


def test_serve_piped_shows_the_banner_without_bar_or_next_step(tmp_path: Path) -> None:
    folder = make_folder(tmp_path / "docs")
    server = subprocess.Popen(
        _serve(folder), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert server.stdin is not None
    assert server.stderr is not None
    try:
        lines = [server.stderr.readline().decode().rstrip("\n") for _ in range(2)]
        server.stdin.close()  # the client goes away
        assert server.wait(30) == 0
        rest = server.stderr.read().decode()
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        for stream in (server.stdout, server.stderr):
            if stream is not None:
                stream.close()
    assert lines == _banner(folder)
    assert rest == ""


@pytest.mark.parametrize("how", ["Ctrl-C", "SIGINT", "SIGTERM", "stdin closed"])
def test_serve_on_a_terminal_shows_the_bar_then_the_banner_and_stops_at_once_with_no_worker_left(
    tmp_path: Path, how: str
) -> None:
    """The screen once the folder is indexed: the bar (ended at its total, on a line of its
    own), the banner, the next step; then the stop."""
    folder = make_folder(tmp_path / "docs")
    with terminal(_serve(folder)) as (server, screen):
        screen.read_until("Ctrl-C to stop\r\n")
        assert screen.lines() == [f"indexing [{'#' * 30}] 4/4", *_banner(folder), NEXT_STEP]
        workers = children(server.pid)
        assert workers, "the folder was indexed by a worker, which is still there"
        start = time.monotonic()
        if how == "stdin closed":
            os.write(screen.master, b"\x04")  # Ctrl-D on an empty line: end of input
        elif how == "Ctrl-C":
            os.write(screen.master, b"\x03")  # the terminal sends SIGINT to the session
        else:
            server.send_signal(signal.Signals[how])
        status = server.wait(30)
        took = time.monotonic() - start
        screen.drain()
    assert status == 0, screen.lines()
    assert took < EXIT_BOUND, f"{how}: exited {took:.2f} s after"
    assert [pid for pid in workers if alive(pid)] == []
    assert "Traceback" not in screen.output.decode("utf-8", "replace")


def test_serve_under_a_host_stops_at_once_when_stdin_closes(tmp_path: Path) -> None:
    """A host (Claude Desktop...) holds stdin as a pipe and closes it to stop the server."""
    folder = make_folder(tmp_path / "docs")
    read_end, write_end = os.pipe()
    try:
        with terminal(_serve(folder), stdin=read_end) as (server, screen):
            os.close(read_end)
            read_end = -1
            screen.read_until("Ctrl-C to stop\r\n")
            start = time.monotonic()
            os.close(write_end)
            write_end = -1
            status = server.wait(30)
            took = time.monotonic() - start
    finally:
        for fd in (read_end, write_end):
            if fd >= 0:
                os.close(fd)
    assert status == 0
    assert took < EXIT_BOUND, f"exited {took:.2f} s after stdin closed"


def hold_the_gil(job: Job) -> None:
    """A worker's job (see below) that never lets its lifeline thread run: it says it started,
    then sleeps in C without releasing the GIL, as a native parser in a tight loop would."""
    (Path(job.root).parent / f"stalled-{os.getpid()}").touch()
    ctypes.PyDLL(None).sleep(3600)


def test_a_second_ctrl_c_leaves_no_worker_even_one_deep_in_native_code(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "stall.docx").write_bytes(b"PK")
    serve = SERVE_STALLING.replace("tests.hostile.runners:misbehave", f"{__name__}:hold_the_gil")
    command = [sys.executable, "-c", serve, "serve", str(folder), "--no-cache", "--workers", "1"]
    with terminal(command) as (server, _screen):
        marker = wait_for(lambda: next(tmp_path.glob("stalled-*"), None), "a parse started")
        worker = int(marker.name.split("-")[1])
        assert worker in children(server.pid)
        server.send_signal(signal.SIGINT)
        server.send_signal(signal.SIGINT)
        server.wait(30)
        wait_for(lambda: not alive(worker), "the worker gone")


def test_read_of_the_catalog_shows_a_bar_on_a_terminal(tmp_path: Path) -> None:
    folder = make_folder(tmp_path / "docs")
    uri = "dpe://local.dpe.docs?format=text"
    master, slave = pty.openpty()
    screen = Screen(master)
    try:
        done = subprocess.run(
            [*DPE, "read", str(folder), uri, "--no-cache"],
            stdout=subprocess.PIPE,
            stderr=slave,
            timeout=120,
            check=False,
        )
        os.close(slave)
        slave = -1
        screen.drain()
    finally:
        if slave >= 0:
            os.close(slave)
        os.close(master)
    assert done.returncode == 0
    assert done.stdout.startswith(b"Documents (4)")
    assert screen.lines() == [f"reading [{'#' * 30}] 4/4"]
