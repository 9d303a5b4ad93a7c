"""A watched folder under churn, as a user's folder treats the server: files of a chunked
format (a large deck, extracted in page chunks across the workers) and of a whole format
rewritten slowly in place, files added, renamed and deleted, with a subscriber listening.

At the end: Level 0 lists exactly the folder, no document is still `indexing`, every page
equals a fresh extraction of the file as it is, and the server still answers `initialize`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from dpe_server.catalog.extraction import CHUNK_MIN_PAGES
from dpe_server.read.oneshot import OneShotReader
from tests.e2e.harness import (
    HttpServer,
    Inbox,
    connect,
    http_server,
    is_list_changed,
    is_updated,
    settled,
    write_deck,
    write_doc,
)

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

BIG = [f"Slide {i}" for i in range(CHUNK_MIN_PAGES + 6)]


async def _text(client: Client, uri: str) -> str:
    res = await client.read_resource(uri)
    item = res.contents[0]
    assert isinstance(item, types.TextResourceContents)
    return item.text


async def _log_line(server: HttpServer, needle: str, count: int = 1, timeout: float = 20) -> None:
    """Wait until the server has logged `needle` `count` times."""
    with anyio.fail_after(timeout):
        while server.stderr().count(needle) < count:
            await anyio.sleep(0.05)


async def _rewrite_slowly(server: HttpServer, path: Path, data: bytes) -> None:
    """Write the first half in place, keep it half-written until the server has tried to read
    it twice (the second try is a retry, a chunked extraction for a large deck), then the rest."""
    seen = server.stderr().count(f"{path.name} could not be read")
    with path.open("r+b") as f:
        f.truncate(0)
        f.write(data[: len(data) // 2])
    await _log_line(server, f"{path.name} could not be read", seen + 2)
    with path.open("ab") as f:
        f.write(data[len(data) // 2 :])


async def _listing_matches_disk(client: Client, inbox: Inbox, host: str, folder: Path) -> None:
    """Wait, on `list_changed` notifications, until Level 0 lists exactly the files on disk.
    A notification alone proves nothing: one sent for an earlier change (a rewrite, the first
    half of a rename) may still be in the inbox when the next change is made."""
    on_disk = sorted(p.resolve().as_uri() for p in folder.rglob("*") if p.is_file())
    with anyio.fail_after(20):
        while True:
            catalog = json.loads(await _text(client, f"dpe://{host}"))
            if sorted(d["file_uri"] for d in catalog["documents"]) == on_disk:
                return
            await inbox.wait_for(is_list_changed)


def _bytes_of(writer: Any, path: Path, *args: Any) -> bytes:
    scratch = path.with_name(f"scratch-{path.name}.tmp")  # ignored by the server (*.tmp)
    writer(scratch, *args)
    data = scratch.read_bytes()
    scratch.unlink()
    return data


async def test_churn_leaves_every_document_equal_to_a_fresh_read(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    write_deck(folder / "big.pptx", BIG)
    write_deck(folder / "small.pptx", ["Small"])
    write_doc(folder / "notes.docx", ["Intro", "Details"])
    write_doc(folder / "old.docx", ["Old"])
    inbox = Inbox()
    with http_server(folder, "--workers", "2", "--log-level", "info") as server:
        async with connect("http", "legacy", folder, url=server.url, inbox=inbox) as client:
            resources = (await client.list_resources()).resources
            host = resources[0].uri.split("/")[2]
            await settled(client, host)
            level0 = f"dpe://{host}"
            await client.subscribe_resource(level0)
            big = next(r.uri for r in resources if "big" in r.uri)
            await client.subscribe_resource(big)

            # A large deck (chunked extraction) rewritten slowly with new content.
            data = _bytes_of(write_deck, folder / "big.pptx", [*BIG, "One more"])
            await _rewrite_slowly(server, folder / "big.pptx", data)
            # A whole-format file rewritten slowly.
            data = _bytes_of(write_doc, folder / "notes.docx", ["Intro", "Details", "Later"])
            await _rewrite_slowly(server, folder / "notes.docx", data)
            # Added, renamed, deleted.
            write_deck(folder / "sub" / "added.pptx", ["Added", "After start"])
            await _listing_matches_disk(client, inbox, host, folder)
            (folder / "small.pptx").rename(folder / "sub" / "renamed.pptx")
            await _listing_matches_disk(client, inbox, host, folder)
            (folder / "old.docx").unlink()
            await _listing_matches_disk(client, inbox, host, folder)
            await inbox.wait_for(is_updated(big), timeout=30)

            await settled(client, host, timeout=45)
            on_disk = sorted(p.resolve().as_uri() for p in folder.rglob("*") if p.is_file())
            # A list-changed notice waited for above may be an earlier change's (a rename is a
            # removal and an addition): until the list is the folder's, wait for the next.
            with anyio.move_on_after(30):
                while True:
                    catalog = json.loads(await _text(client, level0))
                    listed = sorted(d["file_uri"] for d in catalog["documents"])
                    if listed == on_disk:
                        break
                    await inbox.wait_for(is_list_changed, timeout=60)  # bounded above
            assert listed == on_disk
            assert not [d for d in catalog["documents"] if d.get("error")]
            with OneShotReader(folder, host, cache=False) as fresh:
                for doc in catalog["documents"]:
                    uri = f"{doc['uri']}?depth=pages&limit=100"
                    assert await _text(client, uri) == fresh.read(uri)[0].text
                    for page in range(doc["page_count"]):
                        page_uri = f"{doc['uri']}/pages/{page}"
                        assert await _text(client, page_uri) == fresh.read(page_uri)[0].text
            assert json.loads(await _text(client, big))["page_count"] == len(BIG) + 1

        # A new session still gets through the handshake.
        async with connect("http", "legacy", folder, url=server.url) as again:
            assert again.server_capabilities is not None
            assert len((await again.list_resources()).resources) == 2  # page size 2
