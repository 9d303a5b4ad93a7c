"""The command line: the banner, the progress bar, `read` exit codes and output."""

from __future__ import annotations

import io
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import pytest

from dpe_server.catalog.catalog import Catalog
from dpe_server.extractors import DEFAULT_LIMITS, Limits
from dpe_server.isolation.backends import ThreadBackend
from dpe_server.model.tree import Properties
from dpe_server.surface.progress import MIN_FILES, progress_bar
from tests.e2e.harness import connect, http_server, make_folder, wait_for, write_deck

SERVE = [sys.executable, "-m", "dpe_server", "serve"]


def _read(folder: Path, uri: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dpe_server", "read", str(folder), uri, "--no-cache"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_read_prints_the_body_and_exits_zero(tmp_path: Path) -> None:
    folder = make_folder(tmp_path / "docs")
    done = _read(folder, "dpe://local.dpe.docs?format=text")
    assert done.returncode == 0
    assert done.stdout.startswith("Documents (4)")
    assert done.stderr == ""


def test_read_error_is_one_sentence_with_its_code_and_exit_two(tmp_path: Path) -> None:
    folder = make_folder(tmp_path / "docs")
    done = _read(folder, "dpe://local.dpe.docs/nope/pages/0")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.strip().endswith("(dpe 4201)")
    assert "Traceback" not in done.stderr
    invalid = _read(folder, "dpe://local.dpe.docs/x?limit=0")
    assert invalid.returncode == 2
    assert "(dpe 4204)" in invalid.stderr


def test_read_of_the_catalog_parses_under_the_worker_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from dpe_server.cli import command as cli
    from dpe_server.isolation import workers

    used: list[tuple[workers.WorkerSettings | None, Limits]] = []

    class Recording(ThreadBackend):
        def __init__(
            self, settings: workers.WorkerSettings | None = None, limits: Limits = DEFAULT_LIMITS
        ) -> None:
            super().__init__(limits=limits)
            used.append((settings, limits))

    monkeypatch.setattr(workers, "ProcessBackend", Recording)
    folder = make_folder(tmp_path / "docs")
    options = ["--no-cache", "--workers", "1", "--timeout", "7", "--memory-mb", "900"]
    options += ["--ocr", "off", "--ocr-languages", "en"]
    assert cli.main(["read", str(folder), "dpe://local.dpe.docs?format=text", *options]) == 0
    assert capsys.readouterr().out.startswith("Documents (4)")
    assert used == [
        (
            workers.WorkerSettings(
                workers=1, timeout=7.0, probe_timeout=1.75, memory_bytes=900 * 1024 * 1024
            ),
            Limits(ocr="off", ocr_languages=("en",)),
        )
    ]


def test_serve_prints_a_one_line_banner_on_stderr(tmp_path: Path) -> None:
    folder = make_folder(tmp_path / "docs")
    with http_server(folder) as server:
        deadline = time.monotonic() + 30
        while "serving on" not in server.stderr() and time.monotonic() < deadline:
            time.sleep(0.1)
        lines = [line for line in server.stderr().splitlines() if line.startswith("dpe-server:")]
    assert lines == [
        f"dpe-server: 4 documents, 1 unreadable in {folder.resolve()} as dpe://local.dpe.docs, "
        f"serving on {server.url}"
    ]


@pytest.mark.parametrize(
    ("option", "value", "transport"),
    [
        ("--port", "70000", "http"),
        ("--port", "-1", "http"),
        ("--max-sessions", "0", "http"),
        ("--session-idle-timeout", "0", "http"),
        ("--session-idle-timeout", "nan", "http"),
        ("--max-request-bytes", "100", "http"),
        ("--workers", "-1", "stdio"),
        ("--timeout", "0", "stdio"),
        ("--timeout", "inf", "stdio"),
        ("--memory-mb", "-5", "stdio"),
        ("--memory-mb", "20", "stdio"),
        ("--memory-mb", str(1 << 50), "stdio"),
        ("--page-size", "0", "stdio"),
        ("--debounce-ms", "-1", "stdio"),
        ("--debounce-ms", "600000", "stdio"),
    ],
    ids=str,
)
def test_serve_refuses_a_bad_option_value_in_one_line(
    tmp_path: Path, option: str, value: str, transport: str
) -> None:
    done = subprocess.run(
        [*SERVE, str(tmp_path), "--no-cache", "--transport", transport, f"{option}={value}"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith(f"dpe-server serve: error: argument {option}: '{value}' is not ")
    assert "Traceback" not in done.stderr


def test_read_refuses_a_bad_worker_option_in_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "dpe_server", "read", str(tmp_path), "dpe://x", "--timeout=-3"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "dpe-server read: error: argument --timeout: '-3' is not a number of seconds from 1 to "
        "86400 (see dpe-server read --help)"
    ]


def test_serve_accepts_the_edge_values(tmp_path: Path) -> None:
    from dpe_server.cli import command as cli

    args = cli._parser(with_check=False).parse_args(
        [
            *("serve", str(tmp_path), "--port", "0", "--workers", "0", "--memory-mb", "0"),
            *("--debounce-ms", "0", "--timeout", "1", "--session-idle-timeout", "0.5"),
        ]
    )
    assert (args.port, args.workers, args.memory_mb, args.debounce_ms) == (0, 0, 0, 0)
    assert (args.timeout, args.session_idle_timeout) == (1.0, 0.5)


def test_serve_on_port_zero_names_the_port_it_bound(tmp_path: Path) -> None:
    folder = make_folder(tmp_path / "docs")
    command = [*SERVE, str(folder), "--no-cache", "--transport", "http", "--port", "0"]
    with tempfile.TemporaryFile() as log:
        server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log)
        try:

            def banner() -> str | None:
                log.seek(0)
                found = re.search(rb"serving on (http://\S+)", log.read())
                return found.group(1).decode() if found else None

            url = wait_for(banner, "the banner")
            port = int(url.rsplit(":", 1)[1].split("/")[0])
            assert port != 0

            async def listed() -> int:
                async with connect("http", "auto", folder, url=url) as client:
                    return len((await client.list_resources()).resources)

            assert anyio.run(listed) > 0
        finally:
            server.terminate()
            server.wait(30)


class _SlowProbes(ThreadBackend):
    async def probe(self, root: Path, rel: str) -> Properties:
        await anyio.sleep(0.3)
        return await super().probe(root, rel)


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_progress_bar_draws_on_a_terminal_then_clears(tmp_path: Path) -> None:
    folder = tmp_path / "many"
    write_deck(folder / "0.pptx", ["x"])
    for i in range(1, MIN_FILES + 5):
        (folder / f"{i}.pptx").write_bytes((folder / "0.pptx").read_bytes())
    catalog = Catalog(folder, "h", _SlowProbes())
    tty = _Tty()
    async with anyio.create_task_group() as tg:
        tg.start_soon(progress_bar, catalog, tty)
        await catalog.start()
    out = tty.getvalue()
    assert "indexing [" in out
    assert f"/{MIN_FILES + 5}" in out
    assert out.endswith("\r")


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_progress_bar_stays_silent_off_a_terminal(tmp_path: Path) -> None:
    catalog = Catalog(tmp_path, "h", ThreadBackend())
    stream = io.StringIO()
    await progress_bar(catalog, stream)
    assert stream.getvalue() == ""
