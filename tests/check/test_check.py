"""`dpe-server check` against this server on the built fixtures (stdio and HTTP, both eras),
and against servers broken on purpose: the report must fail naming the rule."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from dpe_server.check import InProcessTarget, Limits, fidelity, render_text, run_check
from dpe_server.cli.command import main
from dpe_server.isolation.backends import ThreadBackend
from dpe_server.model.errors import DocumentNotFound, RequestError
from dpe_server.model.uri import parse
from dpe_server.surface.app import DpeServer, Settings, build_server
from tests.e2e.harness import cache_dir_for, free_port, http_server, write_big_book

ROOT = Path(__file__).resolve().parents[2]
FAST = ["--max-docs", "20", "--max-pages", "2", "--max-elements", "8"]


@dataclass(frozen=True)
class Done:
    returncode: int
    stdout: str
    stderr: str


def _check(capsys: pytest.CaptureFixture[str], *args: str) -> Done:
    """`dpe-server check ARGS`, in-process (the servers it checks are real processes)."""
    code = main(["check", *args])
    out = capsys.readouterr()
    return Done(code, out.out, out.err)


def _serve_argv(folder: Path) -> list[str]:
    """A stdio server of `folder`; its cache is the one every test server of `folder` shares
    (tests/e2e/harness.py), so the folder is extracted once for both eras and the HTTP check,
    not once per server: the check reads what a server serves, cached or not."""
    cache = str(cache_dir_for(folder))
    return [
        sys.executable,
        "-m",
        "dpe_server",
        "serve",
        str(folder),
        "--no-watch",
        "--cache-dir",
        cache,
    ]


def test_check_stdio_both_eras_passes(
    fixture_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    done = _check(capsys, *FAST, "--", *_serve_argv(fixture_dir))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "[legacy] protocol 2025" in done.stdout
    assert "[auto] protocol 2026-07-28" in done.stdout
    assert "\nOK: " in done.stdout


def test_check_http_with_token_passes(
    fixture_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with http_server(fixture_dir, "--no-watch", token="s3cret") as server:
        done = _check(capsys, *FAST, "--json", "--token", "s3cret", server.url)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["failed"] == []
    rules = {p["rule"] for p in report["passed"]}
    assert {"list.fields", "err.4204.scheme", "err.4202.page", "L3.resolves"} <= rules
    eras = {p["era"] for p in report["passed"]}
    assert eras == {"legacy", "auto"}


def test_check_nothing_listening_unreachable(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", "--era", "legacy", f"http://127.0.0.1:{free_port()}/mcp"])
    out = capsys.readouterr().out
    assert code == 2, out
    assert "UNREACHABLE" in out


def test_check_no_target_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check"]) == 2
    assert "give a target" in capsys.readouterr().err


@pytest.mark.anyio
async def test_check_passes_a_server_cutting_a_big_element(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    write_big_book(folder / "big.xlsx")
    settings = Settings(
        root=folder, watch=False, cache=False, backend=ThreadBackend(), max_element_bytes=50_000
    )
    target = InProcessTarget(lambda: build_server(settings), "cutting server")
    report = await run_check(target, ("legacy",), Limits(max_docs=1, max_pages=1, max_elements=3))
    assert report.exit_code == 0, render_text(report)
    assert "L3.cut" in render_text(report, verbose=True)


# ---- servers broken on purpose ---------------------------------------------------------------

Reader = Callable[[str], Coroutine[Any, Any, types.ReadResourceResult]]


def _json_text(result: types.ReadResourceResult) -> dict[str, Any]:
    item = result.contents[0]
    assert isinstance(item, types.TextResourceContents)
    return dict(json.loads(item.text))


def _with_json(
    result: types.ReadResourceResult, payload: dict[str, Any], uri: str | None = None
) -> types.ReadResourceResult:
    item = result.contents[0]
    assert isinstance(item, types.TextResourceContents)
    update = {"text": json.dumps(payload, ensure_ascii=False), "uri": uri or item.uri}
    return types.ReadResourceResult(contents=[item.model_copy(update=update)])


def drop_page_count(read: Reader) -> Reader:
    async def broken(uri: str) -> types.ReadResourceResult:
        result = await read(uri)
        parsed = parse(uri)
        if parsed.level == 1 and parsed.format == "json":
            payload = _json_text(result)
            payload.pop("page_count", None)
            return _with_json(result, payload)
        return result

    return broken


def wrong_page_error(read: Reader) -> Reader:
    async def broken(uri: str) -> types.ReadResourceResult:
        try:
            return await read(uri)
        except RequestError as exc:
            if exc.dpe_code == 4202:
                raise DocumentNotFound("No such page.", uri) from None
            raise

    return broken


def ignore_categories(read: Reader) -> Reader:
    async def broken(uri: str) -> types.ReadResourceResult:
        result = await read(uri.split("?categories=", maxsplit=1)[0])
        return _with_json(result, _json_text(result), uri)

    return broken


def long_summaries(read: Reader) -> Reader:
    async def broken(uri: str) -> types.ReadResourceResult:
        result = await read(uri)
        parsed = parse(uri)
        if parsed.level == 2 and parsed.format == "json":
            payload = _json_text(result)
            for element in payload["elements"]:
                element["summary"] = "x" * 121
            return _with_json(result, payload)
        return result

    return broken


def _broken_server(folder: Path, breaker: Callable[[Reader], Reader]) -> DpeServer:
    server = build_server(
        Settings(root=folder, host="local.dpe.broken", watch=False, backend=ThreadBackend())
    )
    server.app.read = breaker(server.app.read)  # type: ignore[method-assign,assignment]
    return server


@pytest.mark.parametrize(
    ("breaker", "rule", "words"),
    [
        (drop_page_count, "doc.fields", "page_count"),
        (wrong_page_error, "err.4202.page", "dpe_code 4202"),
        (ignore_categories, "L2.categories_filter", "elements"),
        (long_summaries, "L2.summary", "120"),
    ],
    ids=["no-page-count", "wrong-page-error", "categories-ignored", "long-summaries"],
)
@pytest.mark.anyio
async def test_check_broken_server_fails_naming_rule(
    fixture_dir: Path, breaker: Callable[[Reader], Reader], rule: str, words: str
) -> None:
    target = InProcessTarget(lambda: _broken_server(fixture_dir, breaker), "broken server")
    report = await run_check(target, ("legacy",), Limits(max_docs=6, max_pages=2, max_elements=5))
    assert report.exit_code == 1
    assert rule in report.failed_rules()
    text = render_text(report)
    line = next(line for line in text.splitlines() if f"] {rule}  " in line)
    detail = text[text.index(line) :].split("\n", 3)[:3]
    assert words in "\n".join(detail), text


@pytest.mark.anyio
async def test_check_in_process_server_passes(fixture_dir: Path) -> None:
    target = InProcessTarget(lambda: _broken_server(fixture_dir, lambda read: read))
    report = await run_check(target, limits=Limits(max_docs=6, max_pages=2, max_elements=5))
    assert report.failures == [], render_text(report)


def drop_a_word(read: Reader) -> Reader:
    async def broken(uri: str) -> types.ReadResourceResult:
        result = await read(uri)
        item = result.contents[0]
        if parse(uri).level == 2 and isinstance(item, types.TextResourceContents):
            item = item.model_copy(update={"text": item.text.replace("fundamentals", "")})
        return types.ReadResourceResult(contents=[item])

    return broken


@pytest.mark.anyio
async def test_check_words_holds_each_pdf_page_to_pdftotext(
    fixture_dir: Path, tmp_path: Path
) -> None:
    """`--words` (`L2.words`): a pdf page's Markdown must hold what pdftotext reads on it; a
    server dropping one word of a page fails naming the rule."""
    if not fidelity.pdftotext_available():
        pytest.skip("poppler's pdftotext is not installed (Debian: poppler-utils)")
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "glyphs.pdf").write_bytes((fixture_dir / "pdf_glyphs.pdf").read_bytes())
    limits = Limits(max_docs=1, max_pages=2, max_elements=1, words=True)
    for breaker, failed in ((lambda read: read, False), (drop_a_word, True)):
        target = InProcessTarget(lambda b=breaker: _broken_server(folder, b))
        report = await run_check(target, ("legacy",), limits)
        assert ("L2.words" in report.failed_rules()) is failed, render_text(report)
        assert "L2.words" in render_text(report, verbose=True)
