"""Server options and extras end to end: stateless HTTP, broadcast updates, tools, pictures."""

from __future__ import annotations

import base64
import json
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path

import mcp_types as types
import pytest

from dpe_server.catalog.folder import doc_ref_for
from tests.e2e.harness import (
    HttpServer,
    Inbox,
    connect,
    host_of,
    http_server,
    is_updated,
    make_folder,
    settled,
    write_big_book,
    write_deck,
)

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return make_folder(tmp_path / "docs")


# Options that do not get in each other's way share a server (a server's start is most of
# what these tests cost): `--stateless` with `--max-element-bytes` (a folder that also holds
# the big book), `--broadcast-updates` with `--no-tools` (whose test reads no document).


@pytest.fixture(scope="module")
def stateless_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = make_folder(tmp_path_factory.mktemp("stateless") / "docs")
    write_big_book(folder / "big.xlsx")
    return folder


@pytest.fixture(scope="module")
def stateless_cutting(stateless_folder: Path) -> Iterator[HttpServer]:
    with http_server(stateless_folder, "--stateless", "--max-element-bytes", "20000") as server:
        yield server


@pytest.fixture(scope="module")
def broadcasting_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_folder(tmp_path_factory.mktemp("broadcast") / "docs")


@pytest.fixture(scope="module")
def broadcasting_without_tools(broadcasting_folder: Path) -> Iterator[HttpServer]:
    with http_server(broadcasting_folder, "--broadcast-updates", "--no-tools") as server:
        yield server


def _png(width: int, height: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    raw = b"".join(b"\0" + b"\xff\x00\x00" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


async def test_stateless_http_offers_only_what_it_can_deliver(
    stateless_cutting: HttpServer, stateless_folder: Path
) -> None:
    folder, server = stateless_folder, stateless_cutting
    async with connect("http", "legacy", folder, url=server.url) as legacy:
        caps = legacy.server_capabilities.resources
        assert caps is not None
        assert caps.subscribe is False
        assert caps.list_changed is False
        listed = await legacy.list_resources()
        assert listed.resources
    async with connect("http", "auto", folder, url=server.url) as modern:
        caps = modern.server_capabilities.resources
        assert caps is not None
        assert caps.subscribe is True  # subscriptions/listen streams work without sessions


async def test_broadcast_updates_reach_sessions_that_did_not_subscribe(
    broadcasting_without_tools: HttpServer, broadcasting_folder: Path
) -> None:
    inbox = Inbox()
    folder, server = broadcasting_folder, broadcasting_without_tools
    async with connect("http", "legacy", folder, url=server.url, inbox=inbox) as client:
        await settled(client, await host_of(client))
        listed = (await client.list_resources()).resources
        deck = next(r for r in listed if r.meta and r.meta.get("page_count") == 3)
        write_deck(folder / "a" / "report.pptx", ["Changed"])
        await inbox.wait_for(is_updated(deck.uri))


async def test_tools_read_and_search(folder: Path) -> None:
    async with connect("stdio", "legacy", folder) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        assert tools == {"read", "search"}
        await settled(client, await host_of(client))  # every document read: its page count
        listed = (await client.list_resources()).resources
        deck = next(r for r in listed if r.meta and r.meta.get("page_count") == 3)
        uri = deck.uri + "/pages/1?format=markdown"
        via_tool = await client.call_tool("read", {"uri": uri})
        via_read = await client.read_resource(uri)
        first = via_tool.content[0]
        assert isinstance(first, types.TextContent)
        item = via_read.contents[0]
        assert isinstance(item, types.TextResourceContents)
        assert first.text == item.text
        assert not via_tool.is_error

        found = await client.call_tool("search", {"query": "bullet about beta"})
        body = json.loads(found.content[0].text)  # type: ignore[union-attr]
        assert (body["total"], body["indexing"]) == (1, False)
        assert body["results"][0]["uri"].startswith(deck.uri + "/elements/p1-")

        bad = await client.call_tool("read", {"uri": "dpe://nowhere/x/pages/0"})
        assert bad.is_error
        assert "4201" in bad.content[0].text  # type: ignore[union-attr]


async def test_no_tools_option_removes_them(
    broadcasting_without_tools: HttpServer, broadcasting_folder: Path
) -> None:
    server = broadcasting_without_tools
    async with connect("http", "legacy", broadcasting_folder, url=server.url) as client:
        assert client.server_capabilities.tools is None


async def test_level3_picture_comes_with_its_bytes(folder: Path, tmp_path: Path) -> None:
    from pptx import Presentation
    from pptx.util import Inches

    png = _png(4, 3)
    (tmp_path / "pic.png").write_bytes(png)
    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[6])
    slide.shapes.add_picture(str(tmp_path / "pic.png"), Inches(1), Inches(1))
    deck.save(str(folder / "picture.pptx"))
    async with connect("stdio", "auto", folder) as client:
        host = (await client.list_resources()).resources[0].uri.split("/")[2]
        pic_uri = f"dpe://{host}/{doc_ref_for('picture.pptx')}"
        page = json.loads(
            (await client.read_resource(pic_uri + "/pages/0")).contents[0].text  # type: ignore[union-attr]
        )
        image_id = next(e["element_id"] for e in page["elements"] if e["category"] == "image")
        result = await client.read_resource(f"{pic_uri}/elements/{image_id}")
        assert len(result.contents) == 2
        blob = result.contents[1]
        assert isinstance(blob, types.BlobResourceContents)
        assert blob.mime_type == "image/png"
        assert base64.b64decode(blob.blob) == png
        markdown = await client.read_resource(f"{pic_uri}/elements/{image_id}?format=markdown")
        assert len(markdown.contents) == 1


async def test_max_element_bytes_cuts_a_big_element_for_read_and_the_read_tool(
    stateless_cutting: HttpServer, stateless_folder: Path
) -> None:
    uri = f"dpe://local.dpe.docs/{doc_ref_for('big.xlsx')}/elements/p0-tbl1"
    async with connect("http", "legacy", stateless_folder, url=stateless_cutting.url) as client:
        read = await client.read_resource(uri)
        tool = await client.call_tool("read", {"uri": uri})
    item = read.contents[0]
    assert isinstance(item, types.TextResourceContents)
    assert len(item.text.encode()) <= 20_000
    assert json.loads(item.text)["cut"]["max_bytes"] == 20_000
    assert isinstance(tool.content[0], types.TextContent)
    assert tool.content[0].text == item.text
