"""`dpe-server view` of a copy of the fixtures, as a process of its own, for the viewer's tests
(over HTTP, tests/surface/test_viewer.py; in Chromium, tests/surface/test_viewer_browser.py)."""

from __future__ import annotations

import contextlib
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fixtures.goldens import prepare
from tests.e2e.harness import wait_for


@dataclass
class Viewer:
    url: str
    port: int
    folder: Path
    log: Any
    cache: Path

    def get(self, path: str, host: str | None = None) -> tuple[int, bytes, str]:
        request = urllib.request.Request(self.url + path.lstrip("/"))
        if host is not None:
            request.add_unredirected_header("Host", host)
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                return answer.status, answer.read(), answer.headers.get("content-type", "")
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read(), exc.headers.get("content-type", "")

    def text(self, path: str) -> str:
        status, body, _ = self.get(path)
        assert status == 200, (path, status, body[:300])
        return body.decode("utf-8")

    def settled(self) -> str:
        """The list page once no document is `indexing`."""

        def listed() -> str | None:
            page = self.text("/")
            return page if "class='indexing'" not in page else None

        return wait_for(listed, "every document read", 120)


@contextlib.contextmanager
def served_viewer(
    tmp_path_factory: pytest.TempPathFactory,
    only: Collection[str] = (),
    env: Mapping[str, str] | None = None,
    folder: Path | None = None,
) -> Iterator[Viewer]:
    """The fixtures (the goldens' folder `fixtures`, every mtime fixed; `only` these names when
    given), or `folder`, viewed on a free port, in a process with `env` (else this one's)."""
    folder = folder or prepare(tmp_path_factory.mktemp("view"))
    for path in folder.iterdir() if only else ():
        if path.name not in only:
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    cache = tmp_path_factory.mktemp("view-cache")
    args = [sys.executable, "-m", "dpe_server", "view", str(folder), "--no-browser"]
    # No OCR: a picture recognised after the folder settled is announced, and an open page of
    # that document reloads, dropping the element a browser test has just chosen.
    args += ["--cache-dir", str(cache), "--workers", "2", "--ocr", "off"]
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env)

        def said() -> str | None:
            log.seek(0)
            found = re.search(rb"at (http://127\.0\.0\.1:(\d+)/) \(Ctrl-C", log.read())
            return found.group(1).decode() if found else None

        try:
            url = wait_for(said, "the viewer's address", 60)
            port = int(url.rsplit(":", 1)[1].strip("/"))
            yield Viewer(url, port, folder, log, cache)
        finally:
            process.terminate()
            process.wait(30)
