"""The command line: the banner, the progress bar, `read` exit codes and output."""

from __future__ import annotations

import io
import logging
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, cast

import anyio
import anyio.lowlevel
import pytest

from dpe_server.extractors import DEFAULT_LIMITS, Limits
from dpe_server.isolation.backends import ThreadBackend
from dpe_server.surface.progress import progress
from tests.e2e.harness import connect, make_folder, wait_for

if TYPE_CHECKING:
    from dpe_server.surface.app import DpeApp

SERVE = [sys.executable, "-m", "dpe_server", "serve"]


def _dpe(*args: str) -> subprocess.CompletedProcess[str]:
    """`dpe-server ARGS` run to its end, no input, its output kept."""
    return subprocess.run(
        [sys.executable, "-m", "dpe_server", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _read(folder: Path, uri: str) -> subprocess.CompletedProcess[str]:
    return _dpe("read", str(folder), uri, "--no-cache")


def test_read_prints_the_body_and_exits_zero(tmp_path: Path) -> None:
    folder = make_folder(tmp_path / "docs")
    done = _read(folder, "dpe://local.dpe.docs?format=text")
    assert done.returncode == 0
    assert done.stdout.startswith("Documents (4)")
    assert done.stderr == ""


def _fresh_python(code: str) -> subprocess.CompletedProcess[str]:
    """`code` run in a fresh interpreter (what it printed, its exit code)."""
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.parametrize(
    ("uri", "code", "out", "err"),
    [
        ("dpe://local.dpe.docs?format=text", 0, "Documents (4)", ""),
        ("dpe://local.dpe.docs/nope/pages/0", 2, "", "(dpe 4201)\n"),
    ],
)
def test_read_ends_without_the_interpreters_tear_down(
    tmp_path: Path, uri: str, code: int, out: str, err: str
) -> None:
    """`dpe-server read` ends as `serve` does (`_exit_now`): what it wrote flushed, its exit
    code kept, and no tear-down of the interpreter (freeing every module and object one by
    one: 2 % of the instructions of reading a web page, issue 34), so no exit handler runs."""
    folder = make_folder(tmp_path / "docs")
    run = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('torn down', file=sys.stderr))\n"
        f"sys.argv = ['dpe-server', 'read', {str(folder)!r}, {uri!r}, '--no-cache']\n"
        "from dpe_server.cli.command import main\n"
        "sys.exit(main())\n"
    )
    done = _fresh_python(run)
    assert done.returncode == code
    assert done.stdout.startswith(out)
    assert done.stderr.endswith(err)
    assert "torn down" not in done.stderr


def test_read_of_a_document_runs_no_cyclic_collection(tmp_path: Path) -> None:
    """`dpe-server read` of one document pauses the cyclic garbage collector for the whole
    read (its imports, the extraction, the store, the rendering), and restores it after
    (`_read_document`: the collector walked what the read built again and again, issue 34)."""
    from dpe_server.model.uri import format_uri
    from dpe_server.read.oneshot import OneShotReader

    folder = make_folder(tmp_path / "docs")
    with OneShotReader(folder, "h", cache=False) as reader:
        refs = [e.doc_ref for e in reader.entries()]
    uri = format_uri("h", refs[0]) + "?depth=pages"
    run = (
        "import gc, sys\n"
        "runs = []\n"
        "gc.callbacks.append(lambda phase, info: phase == 'start' and runs.append(1))\n"
        "from dpe_server.cli import command\n"
        "read = command._read\n"
        "command._read = lambda args: (runs.clear(), read(args))[1]\n"
        f"rc = command.main(['read', {str(folder)!r}, {uri!r}, '--dpe-host', 'h', '--no-cache'])\n"
        "print(len(runs), gc.isenabled(), file=sys.stderr)\n"
        "sys.exit(rc)\n"
    )
    done = _fresh_python(run)
    assert done.returncode == 0, done.stderr
    assert '"page_count"' in done.stdout
    assert done.stderr.splitlines()[-1] == "0 True"


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
            Limits(ocr="off", ocr_languages=("en",), picture_seconds=1.75),
        )
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
        ("--store-timeout", "0.5", "stdio"),
        ("--store-lock-timeout", "nan", "stdio"),
    ],
    ids=str,
)
def test_serve_refuses_a_bad_option_value_in_one_line(
    tmp_path: Path, option: str, value: str, transport: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """In process (`main`): the parser's refusal is the same in the command's own process
    (`test_read_refuses_a_bad_worker_option_in_one_line`), and a process per value was 0.2 s
    of CPU each."""
    from dpe_server.cli.command import main

    argv = ["serve", str(tmp_path), "--no-cache", "--transport", transport, f"{option}={value}"]
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"dpe-server serve: error: argument {option}: '{value}' is not ")
    assert "Traceback" not in err


def test_serve_refuses_no_cache_with_a_postgresql_store_in_one_line(tmp_path: Path) -> None:
    """`--no-cache` once gave a replica the in-memory store, silently sharing nothing."""
    done = _dpe("serve", str(tmp_path), "--no-cache", "--store", "postgresql://u@127.0.0.1:1/d")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "dpe-server serve: --no-cache cannot be given with a postgresql:// store, which is the "
        "store the replicas share, not a cache; give one or the other."
    ]


def test_serve_refuses_an_unreadable_store_password_file_in_one_line(tmp_path: Path) -> None:
    done = _dpe(
        *("serve", str(tmp_path), "--store", "postgresql://u@127.0.0.1:1/d"),
        *("--store-password-file", str(tmp_path / "missing")),
    )
    assert done.returncode == 2
    assert len(done.stderr.splitlines()) == 1
    assert done.stderr.startswith("dpe-server serve: cannot read --store-password-file: ")


def test_read_refuses_a_bad_worker_option_in_one_line(tmp_path: Path) -> None:
    done = _dpe("read", str(tmp_path), "dpe://x", "--timeout=-3")
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


def test_serve_over_http_on_port_zero_prints_its_banner_naming_the_port_it_bound(
    tmp_path: Path,
) -> None:
    """The banner goes to stderr and names the port the server bound (not 0), where a client
    then lists the documents."""
    folder = make_folder(tmp_path / "docs")
    command = [*SERVE, str(folder), "--no-cache", "--transport", "http", "--port", "0"]
    with tempfile.TemporaryFile() as log:
        server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log)
        try:

            def stderr() -> str:
                log.seek(0)
                return log.read().decode("utf-8", "replace")

            def banner() -> str | None:
                found = re.search(r"dpe-server: serving .* on (http://\S+)", stderr())
                return found.group(1) if found else None

            url = wait_for(banner, "the banner")
            port = int(url.rsplit(":", 1)[1].split("/")[0])
            assert port != 0
            wait_for(lambda: "to list them" in stderr(), "the banner's second line")
            lines = [line for line in stderr().splitlines() if line.startswith("dpe-server:")]

            async def listed() -> int:
                async with connect("http", "auto", folder, url=url) as client:
                    return len((await client.list_resources()).resources)

            assert anyio.run(listed) > 0
        finally:
            server.terminate()
            server.wait(30)
    root = folder.resolve()
    assert lines == [
        f"dpe-server: serving 4 documents from {root} as dpe://local.dpe.docs on {url}",
        f"dpe-server: 1 unreadable (1 encrypted); to list them: dpe-server read {root} "
        "'dpe://local.dpe.docs?format=text'",
    ]
    assert url == f"http://127.0.0.1:{port}/mcp"


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.anyio
async def test_progress_ends_at_its_total_on_a_line_of_its_own() -> None:
    done = [0]
    tty = _Tty()
    async with progress("indexing", lambda: (done[0], 3), tty):
        for _ in range(3):
            done[0] += 1
            await anyio.lowlevel.checkpoint()
    assert tty.getvalue().endswith(f"\rindexing [{'#' * 30}] 3/3\n")


@pytest.mark.anyio
async def test_progress_cut_short_still_ends_its_line() -> None:
    tty = _Tty()
    with pytest.raises(RuntimeError):
        async with progress("indexing", lambda: (1, 3), tty):
            raise RuntimeError
    assert tty.getvalue().endswith(f"\rindexing [{'#' * 10}{' ' * 20}] 1/3\n")


@pytest.mark.anyio
async def test_progress_stays_silent_off_a_terminal() -> None:
    stream = io.StringIO()
    async with progress("indexing", lambda: (1, 3), stream):
        await anyio.lowlevel.checkpoint()
    assert stream.getvalue() == ""


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda p: p / "missing", "there is no folder {p}."),
        (lambda p: p / "one.docx", "{p} is a file, not a folder; give the folder of documents."),
    ],
    ids=["missing", "a file"],
)
@pytest.mark.parametrize("command", ["serve", "read"])
def test_a_folder_that_cannot_be_served_is_one_sentence_and_exit_two(
    tmp_path: Path, command: str, make: Callable[[Path], Path], says: str
) -> None:
    (tmp_path / "one.docx").write_bytes(b"PK")
    path = make(tmp_path)
    extra = ["dpe://x"] if command == "read" else []
    done = _dpe(command, str(path), *extra)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [f"dpe-server {command}: " + says.format(p=path)]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every folder")
def test_an_unreadable_folder_is_one_sentence_and_exit_two(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from dpe_server.cli import command as cli

    folder = tmp_path / "closed"
    folder.mkdir(mode=0)
    try:
        assert cli.main(["serve", str(folder)]) == 2
    finally:
        folder.chmod(0o700)
    assert capsys.readouterr().err == (
        f"dpe-server serve: the folder {folder} cannot be read (Permission denied).\n"
    )


def test_version_names_the_package_version() -> None:
    from dpe_server import __version__

    done = _dpe("--version")
    assert done.returncode == 0
    assert done.stdout == f"dpe-server {__version__}\n"


def test_banner_logs_later_changes_of_its_counts(caplog: pytest.LogCaptureFixture) -> None:
    from dpe_server.cli.banner import Banner

    entries = [SimpleNamespace(error=None), SimpleNamespace(error=None)]
    catalog = SimpleNamespace(root=Path("/docs"), entries=lambda: entries)
    out = io.StringIO()
    banner = Banner(cast("DpeApp", SimpleNamespace(host="h", catalog=catalog)), out)
    with caplog.at_level(logging.INFO, "dpe_server"):
        banner.recount()  # nothing shown yet: nothing to compare with
        banner.listening("stdio")
        banner.indexed()
        banner.recount()  # unchanged
        entries.append(SimpleNamespace(error=SimpleNamespace(kind="corrupt")))
        banner.recount()
        banner.recount()
    assert [r.getMessage() for r in caplog.records] == ["now 3 documents, 1 unreadable (1 corrupt)"]
    assert (
        banner.stream.getvalue()
        == "dpe-server: serving 2 documents from /docs as dpe://h on stdio\n"
    )
