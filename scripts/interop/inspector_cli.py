"""The MCP Inspector's CLI mode against the server, over streamable HTTP and over stdio.

Each check is one `inspector --cli TARGET --method ...` run whose JSON output is inspected.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from installs import CACHE, Node
from servers import http_server, serve_command

TIMEOUT = 120
FORMATS = (("markdown", "text/markdown"), ("text", "text/plain"))


class Inspector:
    def __init__(self, runtime: Node) -> None:
        home = CACHE / "home"  # the Inspector keeps its catalog and state under $HOME
        home.mkdir(parents=True, exist_ok=True)
        self.env = {**runtime.env, "HOME": str(home)}
        self.binary = runtime.bin("inspector")
        self.passed = 0
        self.failed: list[str] = []

    def call(self, target: list[str], method: str, uri: str | None = None) -> tuple[int, str]:
        args = [str(self.binary), "--cli"]
        http = target[0].startswith("http")
        args += target if http else []
        args += ["--method", method, *(["--uri", uri] if uri else [])]
        args += [] if http else ["--", *target]
        try:
            done = subprocess.run(
                args, env=self.env, capture_output=True, text=True, timeout=TIMEOUT, check=False
            )
        except subprocess.TimeoutExpired:
            return -1, f"timed out after {TIMEOUT} s"
        return done.returncode, done.stdout if done.returncode == 0 else done.stdout + done.stderr

    def check(
        self,
        name: str,
        target: list[str],
        method: str,
        uri: str | None,
        predicate: Callable[[Any], bool],
    ) -> Any:
        """Run one call; it passes when it exits 0 with JSON that satisfies `predicate`."""
        code, out = self.call(target, method, uri)
        payload: Any = None
        ok = False
        if code == 0:
            try:
                payload = json.loads(out)
                ok = bool(predicate(payload))
            except (ValueError, KeyError, IndexError, TypeError):
                ok = False
        self._record(name, ok, out)
        return payload if ok else None

    def expect_error(self, name: str, target: list[str], uri: str, words: str) -> None:
        code, out = self.call(target, "resources/read", uri)
        self._record(name, code != 0 and words in out, f"exit {code}: {out}")

    def _record(self, name: str, ok: bool, detail: str) -> None:
        if ok:
            self.passed += 1
            print(f"  ok   {name}", flush=True)
        else:
            self.failed.append(name)
            print(f"  FAIL {name}: {detail.strip()[:300]}", flush=True)


def _text(result: Any) -> str:
    return str(result["contents"][0]["text"])


def _json_of(result: Any) -> Any:
    return json.loads(_text(result))


def _is_text(mime: str, result: Any) -> bool:
    return bool(result["contents"][0]["mimeType"] == mime and _text(result).strip())


def _is_element(element_id: str, result: Any) -> bool:
    return bool(_json_of(result)["element_id"] == element_id)


def check_levels(ins: Inspector, target: list[str], where: str, docs: list[Any]) -> None:
    """resources/read at every level (JSON) of each format, Markdown and text of one page."""
    host = str(docs[0]["uri"]).split("/")[2]
    ins.check(
        f"{where}: read level 0",
        target,
        "resources/read",
        f"dpe://{host}",
        lambda r: _json_of(r)["total_count"] == len(docs),
    )
    readable = [d for d in docs if d["_meta"]["page_count"] > 0 and "error" not in d["_meta"]]
    for doc in {d["_meta"]["file_type"]: d for d in reversed(readable)}.values():
        uri, kind = doc["uri"], doc["_meta"]["file_type"]
        ins.check(
            f"{where}: read level 1 {kind}",
            target,
            "resources/read",
            f"{uri}?depth=pages",
            lambda r: len(_json_of(r)["pages"]) > 0,
        )
        page = ins.check(
            f"{where}: read level 2 {kind}",
            target,
            "resources/read",
            f"{uri}/pages/0",
            lambda r: len(_json_of(r)["elements"]) > 0,
        )
        for fmt, mime in FORMATS if kind == "docx" else ():
            ins.check(
                f"{where}: read level 2 {kind} {fmt}",
                target,
                "resources/read",
                f"{uri}/pages/0?format={fmt}",
                partial(_is_text, mime),
            )
        if page is not None:
            element_id = _json_of(page)["elements"][0]["element_id"]
            ins.check(
                f"{where}: read level 3 {kind}",
                target,
                "resources/read",
                f"{uri}/elements/{element_id}",
                partial(_is_element, element_id),
            )
    ins.expect_error(
        f"{where}: read of an unknown document fails with the server's message",
        target,
        f"dpe://{host}/no-such-doc-000000",
        "No document",
    )


def settle(ins: Inspector, target: list[str], seconds: float = 90.0) -> None:
    """Wait until the server's list holds no file still `indexing` (it lists every file at
    once, those not yet probed so), as a client that needs page counts would."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        code, out = ins.call(target, "resources/list", None)
        try:
            listed = json.loads(out) if code == 0 else None
        except ValueError:
            listed = None
        if listed and not any(d["_meta"].get("indexing") for d in listed["resources"]):
            return
        time.sleep(0.5)


def run(runtime: Node, folder: Path) -> Inspector:
    ins = Inspector(runtime)
    token = secrets.token_urlsafe(32)
    with http_server(folder, token) as server:
        # As docs/clients.md gives it: the token in an Authorization header.
        target = [server.url, "--header", f"Authorization: Bearer {token}"]
        settle(ins, target)
        listed = ins.check(
            "http: resources/list (the Inspector follows nextCursor)",
            target,
            "resources/list",
            None,
            lambda r: len(r["resources"]) > 5 and "nextCursor" not in r,
        )
        ins.check(
            "http: resources/templates/list",
            target,
            "resources/templates/list",
            None,
            lambda r: (
                sorted(t["name"] for t in r["resourceTemplates"])
                == ["document-element", "document-page"]
            ),
        )
        if listed is not None:
            check_levels(ins, target, "http", listed["resources"])
    stdio = serve_command(folder, "--no-watch")
    listed = ins.check(
        "stdio: resources/list",
        stdio,
        "resources/list",
        None,
        lambda r: len(r["resources"]) > 5,
    )
    if listed is not None:
        # (a fresh server per call: files not yet probed are listed `indexing`, each readable)
        doc = next(
            d
            for d in listed["resources"]
            if "error" not in d["_meta"]
            and (d["_meta"]["page_count"] > 0 or d["_meta"].get("indexing"))
        )
        ins.check(
            "stdio: read level 2 markdown",
            stdio,
            "resources/read",
            f"{doc['uri']}/pages/0?format=markdown",
            lambda r: r["contents"][0]["mimeType"] == "text/markdown",
        )
        ins.check(
            "stdio: resources/templates/list",
            stdio,
            "resources/templates/list",
            None,
            lambda r: len(r["resourceTemplates"]) == 2,
        )
    return ins
