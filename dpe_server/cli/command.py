"""The `dpe-server` command: serve a folder, read one URI, or check another DPE server.

    dpe-server serve DIR [options]     serve DIR over stdio (default) or streamable HTTP
    dpe-server read DIR URI            print what resources/read of URI returns
    dpe-server check TARGET            check a DPE server (a command line or an HTTP URL)
    dpe-server view DIR                a web page showing what the server sees of DIR

Logs go to stderr; in stdio mode stdout carries nothing but protocol messages. A bad option
value, or a folder that is missing, a file or unreadable, is one sentence and exit 2; SIGINT,
SIGTERM or the end of stdin stops `serve` cleanly and at once (exit 0). Every option is
described in docs/reference.md (tests/test_docs.py keeps it so).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import logging
import math
import os
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar, cast

from dpe_server import PASSWORDS_ENV, TOKEN_ENV, __version__

if TYPE_CHECKING:
    from dpe_server.catalog.stores import StoreOptions
    from dpe_server.extractors import Limits
    from dpe_server.isolation.passwords import Passwords
    from dpe_server.isolation.workers import WorkerSettings
    from dpe_server.views.render import Body

# Each subcommand imports what it needs when it runs: `read` never loads the MCP SDK, so it
# starts in a fraction of the time.

log = logging.getLogger("dpe_server")
T = TypeVar("T")


def _folder_problem(path: Path) -> str | None:
    """Why `path` cannot be served or read, in one sentence; None when it can."""
    if not path.exists():
        return f"there is no folder {path}"
    if not path.is_dir():
        return f"{path} is a file, not a folder; give the folder of documents"
    try:
        with os.scandir(path):
            pass
    except OSError as exc:
        return f"the folder {path} cannot be read ({exc.strerror or exc})"
    return None


def _option(convert: Callable[[str], T], ok: Callable[[T], bool], rule: str) -> Callable[[str], T]:
    """An argparse `type`: `convert` the value, refuse it (usage error) unless `ok`."""

    def parse(value: str) -> T:
        try:
            number = convert(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{value!r} is not {rule}") from None
        if not ok(number):
            raise argparse.ArgumentTypeError(f"{value!r} is not {rule}")
        return number

    return parse


_PORT = _option(int, lambda n: 0 <= n <= 65535, "a port from 0 to 65535, 0 for any free port")
_AT_LEAST_ONE = _option(int, lambda n: n >= 1, "a whole number of at least 1")
_WORKERS = _option(int, lambda n: n >= 0, "a whole number, 0 for one per core")
_MEGABYTES = _option(  # below about 64 MB the interpreter cannot even start its threads
    int,
    lambda n: n == 0 or 128 <= n <= 1024 * 1024,
    "a number of MB from 128 to 1048576, 0 for no limit",
)
_DEBOUNCE = _option(int, lambda n: 0 <= n <= 60_000, "a number of milliseconds from 0 to 60000")
_REQUEST_BYTES = _option(int, lambda n: n >= 1024, "a number of bytes of at least 1024")
_IDLE_SECONDS = _option(
    float, lambda x: x > 0 and math.isfinite(x), "a number of seconds greater than 0"
)
_TIMEOUT_SECONDS = _option(float, lambda x: 1 <= x <= 86_400, "a number of seconds from 1 to 86400")
_STORE_SECONDS = _option(float, lambda x: 0.1 <= x <= 3600, "a number of seconds from 0.1 to 3600")
_STORE_TIMEOUT = _option(  # with the watchdog's second, a read has time to reconnect (2 s)
    float, lambda x: 1 <= x <= 3600, "a number of seconds from 1 to 3600"
)


class _Parser(argparse.ArgumentParser):
    """A usage error is one line naming the fix, not the whole usage block; exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _parser(with_check: bool) -> argparse.ArgumentParser:
    parser = _Parser(
        prog="dpe-server",
        description="Serve office files (xlsx, pdf, pptx, docx) as dpe:// MCP resources.",
    )
    parser.add_argument("--version", action="version", version=f"dpe-server {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="serve a folder over stdio or streamable HTTP")
    serve.add_argument("dir", type=Path, help="the documents folder (watched recursively)")
    serve.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    serve.add_argument("--bind", default="127.0.0.1", help="HTTP: address to bind")
    serve.add_argument("--port", type=_PORT, default=8765, help="HTTP: port (0: any free port)")
    serve.add_argument(
        "--token",
        default=os.environ.get(TOKEN_ENV),
        help=f"HTTP: require this bearer token (default: ${TOKEN_ENV})",
    )
    serve.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="HOST",
        help="HTTP: also accept this Host header (repeatable; needed when not on loopback)",
    )
    serve.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="HTTP: also accept this Origin, e.g. https://app.example (repeatable)",
    )
    serve.add_argument(
        "--stateless",
        action="store_true",
        help="HTTP: stateless mode (no sessions; handshake-era subscriptions not offered)",
    )
    serve.add_argument(
        "--max-sessions", type=_AT_LEAST_ONE, default=100, help="HTTP: sessions at most"
    )
    serve.add_argument(
        "--session-idle-timeout",
        type=_IDLE_SECONDS,
        default=600.0,
        metavar="SECONDS",
        help="HTTP: idle sessions expire after this long",
    )
    serve.add_argument("--dpe-host", default="", help="the dpe:// host (default local.dpe.<dir>)")
    serve.add_argument("--no-tools", action="store_true", help="do not offer the read/search tools")
    serve.add_argument(
        "--broadcast-updates",
        action="store_true",
        help="send `updated` for a changed document to every session, subscribed or not",
    )
    serve.add_argument(
        "--page-size", type=_AT_LEAST_ONE, default=50, help="resources/list entries per page"
    )
    serve.add_argument(
        "--debounce-ms", type=_DEBOUNCE, default=150, help="wait this long for a burst of changes"
    )
    serve.add_argument("--no-watch", action="store_true", help="do not watch the folder")
    serve.add_argument(
        "--store",
        type=_store_url,
        default="sqlite://",
        metavar="URL",
        help="sqlite:///FOLDER (default: the SQLite cache) or postgresql://… shared by replicas",
    )
    serve.add_argument(
        "--store-password-file",
        type=Path,
        default=None,
        metavar="FILE",
        help="postgresql://: the database password, from the first line of FILE (or give it in "
        "PGPASSWORD or ~/.pgpass: never in the URL, which every local user can see)",
    )
    serve.add_argument(
        "--store-timeout",
        type=_STORE_TIMEOUT,
        default=None,
        metavar="SECONDS",
        help="postgresql://: a statement running longer is cancelled and the read says the "
        "store cannot be read just now (default: 5)",
    )
    serve.add_argument(
        "--store-lock-timeout",
        type=_STORE_SECONDS,
        default=None,
        metavar="SECONDS",
        help="postgresql://: a statement waiting this long for a lock (a table under "
        "maintenance) is cancelled likewise (default: 2)",
    )
    _worker_options(serve)
    serve.add_argument(
        "--max-request-bytes",
        type=_REQUEST_BYTES,
        default=1024 * 1024,
        metavar="BYTES",
        help="HTTP: larger request bodies are refused (413)",
    )
    serve.add_argument(
        "--max-connections",
        type=_AT_LEAST_ONE,
        default=1000,
        help="HTTP: open connections at most (past it the longest idle one is closed)",
    )
    serve.add_argument(
        "--head-timeout",
        type=_IDLE_SECONDS,
        default=10.0,
        metavar="SECONDS",
        help="HTTP: a request's head must arrive within this long (408 otherwise)",
    )
    serve.add_argument(
        "--body-timeout",
        type=_IDLE_SECONDS,
        default=30.0,
        metavar="SECONDS",
        help="HTTP: a request's body must arrive within this long of its head (408 otherwise)",
    )
    _cache_options(serve)
    _element_option(serve)
    serve.add_argument(
        "--log-level", default="warning", choices=("debug", "info", "warning", "error")
    )

    read = sub.add_parser("read", help="print what resources/read of a dpe:// URI returns")
    read.add_argument("dir", type=Path, help="the documents folder")
    read.add_argument("uri", help="a dpe:// URI, e.g. dpe://local.dpe.docs/report-1a2b3c/pages/0")
    read.add_argument("--dpe-host", default="", help="the dpe:// host (default local.dpe.<dir>)")
    _cache_options(read)
    _worker_options(read)
    _element_option(read)

    view = sub.add_parser("view", help="a web page showing what the server sees of a folder")
    view.add_argument("dir", type=Path, help="the documents folder (watched recursively)")
    view.add_argument("--port", type=_PORT, default=0, help="port on 127.0.0.1 (0: a free one)")
    view.add_argument("--no-browser", action="store_true", help="do not open a web browser")
    _cache_options(view)
    _worker_options(view)
    if with_check:
        from dpe_server.check.command import add_parser

        add_parser(cast("argparse._SubParsersAction[argparse.ArgumentParser]", sub))
    else:
        sub.add_parser(
            "check", help="check a DPE server against SPEC (a command line or an HTTP URL)"
        )
    return parser


def _cache_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        help="where the persistent cache lives (default: the user's cache folder)",
    )
    parser.add_argument(
        "--no-cache", action="store_true", help="keep extracted trees in memory only"
    )


def _element_option(parser: argparse.ArgumentParser) -> None:
    from dpe_server.views.element_cap import DEFAULT_MAX_ELEMENT_BYTES

    parser.add_argument(
        "--max-element-bytes",
        type=_element_bytes,
        default=DEFAULT_MAX_ELEMENT_BYTES,
        metavar="BYTES",
        help="a Level 3 element whose JSON is larger is served with its long texts cut; 0: never",
    )


def _store_options(args: argparse.Namespace) -> StoreOptions | None:
    """How a postgresql:// store is used; None (said on stderr) when the password file cannot
    be read."""
    from dpe_server.catalog.stores import StoreOptions

    password = None
    if args.store_password_file is not None:
        try:
            lines = args.store_password_file.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            print(f"dpe-server serve: cannot read --store-password-file: {exc}", file=sys.stderr)
            return None
        password = lines[0] if lines else ""
    elif _url_password(args.store):
        log.warning(
            "the --store URL holds a password, which every local user can see in the process "
            "list; give it in PGPASSWORD, a ~/.pgpass file or --store-password-file instead"
        )
    given = {
        name: value
        for name, value in (
            ("timeout", args.store_timeout),
            ("lock_timeout", args.store_lock_timeout),
        )
        if value is not None
    }
    return StoreOptions(password, **given)


def _url_password(url: str) -> bool:
    """Whether a store URL carries a password (`user:password@host`)."""
    from urllib.parse import urlsplit

    try:
        return bool(urlsplit(url).password)
    except ValueError:
        return False


def _store_url(value: str) -> str:
    from dpe_server.catalog.stores import check_store_url

    try:
        return check_store_url(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _element_bytes(value: str) -> int:
    from dpe_server.views.element_cap import MIN_MAX_ELEMENT_BYTES

    try:
        n = int(value)
    except ValueError:
        n = -1
    if n != 0 and n < MIN_MAX_ELEMENT_BYTES:
        raise argparse.ArgumentTypeError(
            f"give a number of bytes of at least {MIN_MAX_ELEMENT_BYTES}, or 0 for no limit"
        )
    return n


def _worker_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--passwords",
        type=_passwords_file,
        default=os.environ.get(PASSWORDS_ENV) or None,
        metavar="FILE",
        help=f"TOML file of passwords to try on protected files (default: ${PASSWORDS_ENV}; "
        "see docs/passwords.md)",
    )
    parser.add_argument(
        "--workers",
        type=_WORKERS,
        default=0,
        metavar="N",
        help="parsing processes (default: cores)",
    )
    parser.add_argument(
        "--timeout",
        type=_TIMEOUT_SECONDS,
        default=60.0,
        metavar="SECONDS",
        help="stop a file's parse after this long (probes: a quarter of it, at most 15 s)",
    )
    parser.add_argument(
        "--memory-mb",
        type=_MEGABYTES,
        default=2048,
        metavar="MB",
        help="memory (address space) of one parsing process; 0 for no limit",
    )
    parser.add_argument(
        "--ocr",
        choices=("auto", "off", "force"),
        default="auto",
        help="recognise pages that are pictures (auto), none (off), every pdf page (force); "
        "needs Tesseract or the dpe-server[ocr] extra",
    )
    parser.add_argument(
        "--ocr-engine",
        choices=("auto", "tesseract", "rapidocr"),
        default="auto",
        help="OCR engine: the tesseract command when found, else the dpe-server[ocr] extra (auto)",
    )
    parser.add_argument(
        "--ocr-languages",
        type=_ocr_languages,
        default=(),
        metavar="LANGS",
        help="comma list of the languages OCR reads: ISO codes (en, zh, ar...) or Tesseract's "
        "names (default: every language the engine has)",
    )
    parser.add_argument(
        "--keep-location",
        action="store_true",
        help="keep the GPS position of photos in their metadata (left out by default)",
    )


def _ocr_languages(value: str) -> tuple[str, ...]:
    from dpe_server.extractors.ocr.settings import parse_languages

    try:
        return parse_languages(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


PICTURE_SHARE = 0.25
"""Of `--timeout`, what one job may spend recognising an office file's pictures."""


def _limits(args: argparse.Namespace) -> Limits:
    from dpe_server.extractors import Limits
    from dpe_server.extractors.ocr.settings import check_languages

    if args.ocr != "off" and (problem := check_languages(args.ocr_engine, args.ocr_languages)):
        sys.exit(f"dpe-server: error: --ocr-languages: {problem}")
    return Limits(
        ocr=args.ocr,
        ocr_languages=args.ocr_languages,
        ocr_engine=args.ocr_engine,
        keep_location=args.keep_location,
        picture_seconds=args.timeout * PICTURE_SHARE,
    )


def _passwords_file(value: str) -> str:
    if not Path(value).is_file():
        raise argparse.ArgumentTypeError(f"no passwords file at {value}")
    return value


def _passwords(args: argparse.Namespace) -> Passwords:
    """The passwords file's contents (none without `--passwords`); exits on a bad file."""
    from dpe_server.isolation.passwords import NO_PASSWORDS, PasswordsFileError, load_passwords

    if not args.passwords:
        return NO_PASSWORDS
    try:
        return load_passwords(Path(args.passwords))
    except PasswordsFileError as exc:
        sys.exit(f"dpe-server: error: the passwords file: {exc}")


def _worker_settings(args: argparse.Namespace) -> WorkerSettings:
    from dpe_server.isolation.workers import WorkerSettings

    return WorkerSettings(
        workers=args.workers,
        timeout=args.timeout,
        probe_timeout=min(15.0, max(1.0, args.timeout / 4)),
        memory_bytes=args.memory_mb * 1024 * 1024,
        passwords=_passwords(args),
    )


def main(argv: Sequence[str] | None = None) -> int:
    """The command: `argv` (default: the process's arguments), its exit status returned.

    Run as the process's own command (no `argv`), `serve` ends the process itself once it has
    stopped cleanly, without the interpreter's tear-down (a second or more on a busy machine
    for the hundreds of modules the MCP SDK loads): Ctrl-C or a closed stdin exit at once."""
    argv_given = argv
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parser(with_check=bool(argv) and argv[0] == "check").parse_args(argv)
    logging.basicConfig(
        level=getattr(logging, str(getattr(args, "log_level", "warning")).upper()),
        stream=sys.stderr,
        format="dpe-server %(levelname)s %(name)s: %(message)s",
    )
    if args.command == "check":
        from dpe_server.check.command import run

        return run(args)
    args.dir = args.dir.expanduser()
    if (problem := _folder_problem(args.dir)) is not None:
        print(f"dpe-server {args.command}: {problem}.", file=sys.stderr)
        return 2
    postgres = args.command == "serve" and args.store.startswith(("postgresql://", "postgres://"))
    if postgres and args.no_cache:
        print(
            "dpe-server serve: --no-cache cannot be given with a postgresql:// store, which "
            "is the store the replicas share, not a cache; give one or the other.",
            file=sys.stderr,
        )
        return 2
    if args.command not in ("serve", "read", "view"):
        return 2
    code = {"serve": _serve, "read": _read, "view": _view}[args.command](args)
    if argv_given is None:  # (the interpreter's tear-down: 2 % of reading a web page)
        _exit_now(code)
    return code


def _serve(args: argparse.Namespace) -> int:
    from dpe_server.cli.allocator import big_blocks_returned
    from dpe_server.cli.banner import Banner
    from dpe_server.surface.app import Settings, build_server
    from dpe_server.surface.connections import ConnectionLimits
    from dpe_server.surface.transports import HttpOptions, serve_http, serve_stdio

    store_options = _store_options(args)
    if store_options is None:
        return 2
    settings = Settings(
        root=args.dir,
        host=args.dpe_host,
        tools=not args.no_tools,
        broadcast_updates=args.broadcast_updates,
        stateless=args.stateless,
        page_size=args.page_size,
        watch=not args.no_watch,
        cache=not args.no_cache,
        cache_dir=args.cache_dir,
        store_url=args.store,
        store_options=store_options,
        debounce_ms=max(10, args.debounce_ms),  # the watcher polls at most every 10 ms
        max_element_bytes=args.max_element_bytes,
        workers=_worker_settings(args),
        limits=_limits(args),
    )
    big_blocks_returned()  # a whole Level 0 read's bodies do not stay resident once sent
    server = build_server(settings)
    banner = Banner(server.app)
    server.app.on_ready = banner.indexed
    server.app.on_change = lambda _change: banner.recount()
    try:
        if args.transport == "http":
            options = HttpOptions(
                bind=args.bind,
                port=args.port,
                token=args.token,
                allow_hosts=args.allow_host,
                allow_origins=args.allow_origin,
                max_sessions=args.max_sessions,
                session_idle_timeout=args.session_idle_timeout,
                max_request_bytes=args.max_request_bytes,
                connections=ConnectionLimits(
                    args.max_connections, args.head_timeout, args.body_timeout
                ),
            )
            token = " (bearer token)" if args.token else ""
            _run(serve_http, server, options, lambda url: banner.listening(url + token))
        else:
            banner.listening("stdio")
            _run(serve_stdio, server)
    except KeyboardInterrupt:  # before the signal handlers are in place
        return 130
    return 1 if server.app.failure is not None else 0


def _view(args: argparse.Namespace) -> int:
    from dpe_server.surface.app import DpeApp, Settings
    from dpe_server.surface.viewer import loopback_socket, serve_viewer

    try:
        sock = loopback_socket(args.port)
    except OSError as exc:
        problem = f"port {args.port} cannot be used ({exc.strerror})"
        print(f"dpe-server view: {problem}.", file=sys.stderr)
        return 2
    app = DpeApp(
        Settings(
            root=args.dir,
            cache=not args.no_cache,
            cache_dir=args.cache_dir,
            workers=_worker_settings(args),
            limits=_limits(args),
        )
    )

    def listening(url: str) -> None:
        print(f"dpe-server: viewing {app.catalog.root} at {url} (Ctrl-C to stop)", file=sys.stderr)
        if not args.no_browser and _desktop():
            import webbrowser

            webbrowser.open(url)

    try:
        _run(serve_viewer, app, sock, listening)
    except KeyboardInterrupt:
        return 0
    return 1 if app.failure is not None else 0


def _desktop() -> bool:
    """Whether a web browser can be shown here (a display, or macOS or Windows)."""
    return sys.platform in ("darwin", "win32") or bool(
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    )


def _exit_now(code: int) -> NoReturn:
    """End the process with `code` once what it wrote is flushed and its logs closed (the
    workers are gone and the cache closed already: nothing else waits for the tear-down, in
    which the interpreter would free every module and object one by one)."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


def _read(args: argparse.Namespace) -> int:
    """`dpe-server read`, the cyclic garbage collector paused for a read of one document (its
    imports, the extraction, the store, the rendering): the process reads it and ends, what it
    builds is freed by reference counting or lives to the end, and the collector only walked
    it again and again (2 % of the instructions of reading a 5 MB web page, with the pause of
    the page's extraction: issue 34). Extraction makes little cyclic garbage (at most some
    2,000 objects of any fixture or corpus file tried), and the memory cap holds all the same.
    A read of the folder (Level 0), a server's work, runs it as a server does."""
    was_enabled = gc.isenabled()
    gc.disable()  # (before any import: `extractors.gcpause` is reached through the package's)
    try:
        return _read_uncollected(args, was_enabled)
    finally:
        if was_enabled:
            gc.enable()


def _read_uncollected(args: argparse.Namespace, collector: bool) -> int:
    from dpe_server.catalog.folder import default_host
    from dpe_server.model.errors import RequestError
    from dpe_server.model.uri import check_host, parse

    _limits(args)  # a usage error before the URI's
    try:
        parsed = parse(args.uri)
        # Before anything is parsed: Level 0 parses the whole folder.
        check_host(parsed, args.dpe_host or default_host(args.dir.resolve()))
        level = parsed.level
    except RequestError as exc:
        print(f"{exc.message} (dpe {exc.dpe_code})", file=sys.stderr)
        return 2
    try:
        # The whole folder (Level 0) is parsed in worker processes, each file under its
        # limits; one document is parsed here, this one-shot process being the one limited.
        if not level and collector:
            gc.enable()
        bodies = _read_document(args) if level else _run(_read_folder, args)
    except RequestError as exc:
        print(f"{exc.message} (dpe {exc.dpe_code})", file=sys.stderr)
        return 2
    for body in bodies:
        if body.text is not None:
            sys.stdout.write(body.text if body.text.endswith("\n") else body.text + "\n")
        else:
            size = len(body.blob or "") * 3 // 4
            print(f"({body.mime_type} picture of about {size} bytes)", file=sys.stderr)
    return 0


def _read_document(args: argparse.Namespace) -> list[Body]:
    """Levels 1 to 3: no event loop, no workers; this process is capped and timed."""
    from dpe_server.isolation.guard import arm_deadline, disarm, limit_memory
    from dpe_server.read.oneshot import OneShotReader

    limit_memory(args.memory_mb * 1024 * 1024)
    deadline = arm_deadline(args.timeout, "the document")
    try:
        with OneShotReader(
            args.dir,
            args.dpe_host,
            args.cache_dir,
            not args.no_cache,
            _limits(args),
            max_element_bytes=args.max_element_bytes,
            passwords=_passwords(args),
        ) as r:
            return r.read(args.uri)
    finally:
        disarm(deadline)


async def _read_folder(args: argparse.Namespace) -> list[Body]:
    """Level 0: every file probed and extracted in worker processes, as a settled server
    lists them (derived titles)."""
    from dpe_server.read.reader import local_reader
    from dpe_server.surface.progress import progress

    cache = not args.no_cache
    workers = _worker_settings(args)
    async with local_reader(
        args.dir, args.dpe_host, args.cache_dir, cache, workers=workers, limits=_limits(args)
    ) as r:
        catalog = r.catalog
        async with progress("reading", lambda: (catalog.warm_count, catalog.scanned)):
            await catalog.warm()
            await catalog.recognise_pending()
        return await r.read(args.uri)


def _run(fn: Callable[..., Awaitable[T]], *args: Any) -> T:
    import anyio  # only the commands that need an event loop pay for it

    return anyio.run(fn, *args)
