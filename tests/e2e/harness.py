"""Start dpe-server as a real process (stdio or streamable HTTP) and connect SDK clients.

Documents for these tests are written here with the plain writer libraries, so the server
tests do not depend on the fixture builders.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import hashlib
import http.server
import io
import json
import os
import random
import shutil
import socket
import string
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

import anyio
import httpx2
import mcp_types as types
from mcp import Client, StdioServerParameters

Transport = Literal["stdio", "http"]
Mode = Literal["legacy", "auto"]
T = TypeVar("T")
HAS_PROC = Path("/proc/self/stat").exists()
"""The process table can be read (Linux): the tests that look at worker processes need it."""


def save_whole(path: Path, data: bytes) -> None:
    """Write `path` as a careful editor saves: the bytes into a hidden file beside it (the
    catalog ignores names starting with "."), then renamed over it. Written in place, a
    served folder's watcher may see the file half written (a truncated zip, served as an
    error while the last good version stays searchable): an `updated` a test would take for
    the finished edit's."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    partial.write_bytes(data)
    os.replace(partial, path)


def write_deck(path: Path, titles: list[str]) -> None:
    from pptx import Presentation

    deck = Presentation()
    for title in titles:
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = f"Bullet about {title}"
    out = io.BytesIO()
    deck.save(out)
    save_whole(path, out.getvalue())


def write_doc(path: Path, headings: list[str]) -> None:
    from docx import Document

    doc = Document()
    doc.core_properties.title = "Notes Title"
    doc.core_properties.keywords = "alpha, beta"
    for heading in headings:
        doc.add_heading(heading, level=1)
        doc.add_paragraph(f"Paragraph under {heading} with several words.")
    out = io.BytesIO()
    doc.save(out)
    save_whole(path, out.getvalue())


BIG_CELL = 20_000
BIG_ROWS = 60


def write_big_book(path: Path) -> None:
    """One sheet: a header row, then BIG_ROWS rows of three cells, each its place (`r3c1:`) and
    BIG_CELL random letters (random, so the zip-bomb guard lets it in): 3.6 MB as JSON."""
    save_whole(path, _big_book())


@functools.cache
def _big_book() -> bytes:
    """The bytes of `write_big_book`, made once per process (0.4 s of CPU each time)."""
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["first", "second", "third"])
    rng = random.Random(7)
    for r in range(BIG_ROWS):
        letters = ["".join(rng.choices(string.ascii_letters, k=BIG_CELL)) for _ in range(3)]
        sheet.append([f"r{r}c{c}:{text}" for c, text in enumerate(letters)])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def write_encrypted(path: Path, password: str = "harness-unknown-password") -> None:
    """A password-protected Word document (agile encryption) whose password nobody gives."""
    save_whole(path, _encrypted(password))


@functools.cache
def _encrypted(password: str) -> bytes:
    """The bytes of `write_encrypted`, encrypted once per process (its key derivation is most
    of what a test folder costs to write)."""
    from fixtures.builders.protected import encrypt, plain_docx

    return encrypt(plain_docx(["Locked heading", "Locked text."]), password)


def age(root: Path) -> Path:
    """Date every file under `root` long ago: settled files, not ones that may be half-written
    (a server retries the failure of a file modified in its last seconds, so a folder with a
    fresh unreadable file is not settled until those seconds have passed)."""
    for path in root.rglob("*"):
        if path.is_file():
            os.utime(path, ns=(1, 1_000_000_000))
    return root


def make_folder(root: Path) -> Path:
    """Two decks (a/report.pptx of three slides, b/report.pptx of one), notes.docx and the
    encrypted locked.docx, dated long ago: a copy of one folder written once per process."""
    shutil.copytree(_folder_written(), root)
    return age(root)


@functools.cache
def _folder_written() -> Path:
    root = Path(tempfile.mkdtemp(prefix="dpe-server-test-folder-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    write_deck(root / "a" / "report.pptx", ["Alpha", "Beta", "Gamma"])
    write_deck(root / "b" / "report.pptx", ["Other"])
    write_doc(root / "notes.docx", ["Intro", "Details"])
    write_encrypted(root / "locked.docx")
    return age(root)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


CACHES = Path(tempfile.mkdtemp(prefix="dpe-server-test-caches-"))
"""The test servers' caches of this test run: a run never reads what another run (another
checkout, another code version) left behind, so a corpus sweep extracts every time."""
atexit.register(shutil.rmtree, CACHES, ignore_errors=True)


def cache_dir_for(folder: Path) -> Path:
    """Where a test server of `folder` keeps its cache: in this run's temporary folder, one per
    served folder (a restart finds it again), never beside the documents (the corpus is
    read-only material of another project)."""
    digest = hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:16]
    return CACHES / f"{folder.name}-{digest}"


def server_args(folder: Path, *extra: str) -> list[str]:
    cache = cache_dir_for(folder)
    return [
        "-m",
        "dpe_server",
        "serve",
        str(folder),
        "--page-size",
        "2",
        "--debounce-ms",
        "50",
        "--cache-dir",
        str(cache),
        *extra,
    ]


def _stat(pid: int) -> list[str] | None:
    """/proc/<pid>/stat after the command name: [state, ppid, ...]; None once reaped."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (stat := _stat(int(entry.name))) and stat[1] == str(pid):
            found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    """Whether `pid` is a process still running (neither reaped nor a zombie)."""
    stat = _stat(pid)
    return stat is not None and stat[0] != "Z"


def wait_for(probe: Callable[[], T | None], what: str, timeout: float = 30.0) -> T:
    """Poll `probe` until it returns something (not None, not False)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = probe()
        if found is not None and found is not False:
            return found
        time.sleep(0.02)
    raise AssertionError(f"{what}: not within {timeout:g} s")


@dataclass
class HttpServer:
    url: str
    process: subprocess.Popen[bytes]
    port: int
    log: Any = None

    def stderr(self) -> str:
        """What the server wrote to stderr so far."""
        self.log.seek(0)
        return str(self.log.read().decode("utf-8", "replace"))


@contextlib.contextmanager
def http_server(folder: Path, *extra: str, token: str | None = None) -> Iterator[HttpServer]:
    port = free_port()
    env = {**os.environ}
    if token:
        env["DPE_SERVER_TOKEN"] = token
    log = tempfile.TemporaryFile()  # noqa: SIM115 (closed in the finally below)
    proc = subprocess.Popen(
        [sys.executable, *server_args(folder, "--transport", "http", "--port", str(port), *extra)],
        stdout=subprocess.DEVNULL,
        stderr=log,
        env=env,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                log.seek(0)
                raise RuntimeError(f"server exited: {log.read().decode()}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            time.sleep(0.05)
        yield HttpServer(f"http://127.0.0.1:{port}/mcp", proc, port, log)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@dataclass
class Inbox:
    """Notifications a handshake-era client received."""

    items: list[types.ServerNotification] = field(default_factory=list)
    event: anyio.Event = field(default_factory=anyio.Event)

    async def handler(self, message: Any) -> None:
        if isinstance(message, Exception):
            return
        self.items.append(message)
        self.event.set()

    async def wait_for(self, predicate: Any, timeout: float = 15.0) -> Any:
        with anyio.fail_after(timeout):
            while True:
                for item in self.items:
                    if predicate(item):
                        self.items.remove(item)
                        return item
                self.event = anyio.Event()
                await self.event.wait()


def is_updated(uri: str) -> Any:
    return lambda n: n.method == "notifications/resources/updated" and n.params.uri == uri


def is_list_changed(n: Any) -> bool:
    return n.method == "notifications/resources/list_changed"


@contextlib.asynccontextmanager
async def connect(
    transport: Transport,
    mode: Mode,
    folder: Path,
    url: str | None = None,
    inbox: Inbox | None = None,
    *,
    read_timeout: float = 30.0,
) -> AsyncIterator[Client]:
    target: Any
    if transport == "stdio":
        target = StdioServerParameters(command=sys.executable, args=server_args(folder))
    else:
        assert url is not None
        target = url
    async with Client(
        target,
        mode=mode,
        message_handler=inbox.handler if inbox else None,
        read_timeout_seconds=read_timeout,
    ) as client:
        yield client


async def settled(client: Client, host: str, timeout: float = 30.0) -> None:
    """Wait until the server has extracted every document (no `indexing` flag at Level 0), so
    the list-changed announcement of the warm-up cannot be mistaken for a test's event."""
    with anyio.fail_after(timeout):
        while True:
            res = await client.read_resource(f"dpe://{host}")
            item = res.contents[0]
            assert isinstance(item, types.TextResourceContents)
            if not any(d.get("indexing") for d in json.loads(item.text)["documents"]):
                return
            await anyio.sleep(0.1)


async def host_of(client: Client) -> str:
    res = await client.list_resources()
    return res.resources[0].uri.split("/")[2]


def http_get(url: str, headers: dict[str, str]) -> int:
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    response = httpx2.post(
        url,
        json=body,
        headers={"accept": "application/json, text/event-stream", **headers},
        timeout=10,
    )
    return int(response.status_code)


class Listener:
    """An HTTP server on loopback that records every request and answers 404."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str]] = []
        seen = self.requests

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                seen.append((self.path, self.headers.get("user-agent", "")))
                self.send_response(404)
                self.send_header("content-length", "0")
                self.end_headers()

            do_HEAD = do_POST = do_PROPFIND = do_OPTIONS = do_GET

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_port}"


@contextlib.contextmanager
def listening() -> Iterator[Listener]:
    """A `Listener` serving in a thread of its own until the block ends."""
    found = Listener()
    thread = threading.Thread(target=found.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield found
    finally:
        found.server.shutdown()
        found.server.server_close()
