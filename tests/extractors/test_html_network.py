"""Nothing a web page, a Markdown text or an e-book names is fetched: pictures, scripts,
style sheets, frames, objects, a `<base>`, an XHTML external entity and a Markdown picture
all point at a loopback listener, and reading every one (and its pictures' bytes) makes it
no request."""

from __future__ import annotations

import http.server
import io
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from dpe_server.extractors import DEFAULT_LIMITS, for_path
from dpe_server.isolation.pictures import picture
from fixtures.builders import epub


@pytest.fixture
def seen() -> Iterator[tuple[str, list[str]]]:
    """A loopback HTTP server's base URL and the paths it was asked for."""
    paths: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            paths.append(self.path)
            self.send_response(404)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", paths
    finally:
        server.shutdown()
        server.server_close()


def test_nothing_named_is_fetched(seen: tuple[str, list[str]], tmp_path: Path) -> None:
    base, paths = seen
    page = (
        f'<?xml version="1.0"?><!DOCTYPE html [<!ENTITY x SYSTEM "{base}/entity">]>'
        f'<html><head><base href="{base}/base/"><link rel="stylesheet" href="{base}/css">'
        f'<script src="{base}/js"></script></head><body><p>&x;</p>'
        f'<img src="{base}/img.png" alt="remote"><img src="relative.png" alt="rel">'
        f'<iframe src="{base}/frame"></iframe><object data="{base}/object"></object>'
        f'<video src="{base}/video.mp4"></video></body></html>'
    ).encode()
    documents = {
        "page.html": page,
        "page.xhtml": page,
        "notes.md": f"![remote]({base}/md.png)\n\n<img src='{base}/raw.png'>\n".encode(),
    }
    members = epub.epub3_members()
    members["OEBPS/text/chapter2.xhtml"] = page
    documents["book.epub"] = epub.write_epub(tmp_path / "book.epub", members).read_bytes()
    for name, data in documents.items():
        extractor = for_path(name)
        assert extractor is not None
        doc = extractor.extract(io.BytesIO(data), DEFAULT_LIMITS)
        for element in (e for p in doc.pages for e in p.elements):
            if element.category.value == "image":  # a Level 3 read of each picture too
                picture(io.BytesIO(data), name, element.metadata)
    assert paths == []
