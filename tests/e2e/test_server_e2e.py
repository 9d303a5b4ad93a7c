"""dpe-server as a real process, driven by the SDK's Client over stdio and streamable HTTP,
in both protocol eras (`mode="legacy"`: the handshake era; `mode="auto"`: 2026-07-28)."""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.e2e.harness import (
    Inbox,
    Mode,
    Transport,
    connect,
    host_of,
    http_server,
    is_list_changed,
    is_updated,
    make_folder,
    settled,
    write_deck,
    write_doc,
)

pytestmark = [
    pytest.mark.anyio,
    # The handshake era's resources/subscribe is what most hosts still speak: test it.
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

COMBOS = [("stdio", "legacy"), ("stdio", "auto"), ("http", "legacy"), ("http", "auto")]
IDS = [f"{t}-{m}" for t, m in COMBOS]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return make_folder(tmp_path / "docs")


@asynccontextmanager
async def served(
    transport: Transport, mode: Mode, folder: Path, inbox: Inbox | None = None
) -> AsyncIterator[Client]:
    """A client of `folder` over `transport`, of a server of its own."""
    if transport == "stdio":
        async with connect(transport, mode, folder, inbox=inbox) as client:
            yield client
        return
    with http_server(folder) as server:
        async with connect(transport, mode, folder, url=server.url, inbox=inbox) as client:
            yield client


def _modern(client: Client) -> bool:
    return not client.protocol_version.startswith(("2024", "2025"))


async def _all_resources(client: Client) -> list[types.Resource]:
    out: list[types.Resource] = []
    cursor: str | None = None
    pages = 0
    while True:
        res = (
            await client.list_resources(cursor=cursor) if cursor else await client.list_resources()
        )
        out += res.resources
        pages += 1
        cursor = res.next_cursor
        if not cursor:
            break
    assert pages > 1, "page size 2 over 4 documents must paginate"
    return out


async def _json(client: Client, uri: str) -> Any:
    res = await client.read_resource(uri)
    item = res.contents[0]
    assert isinstance(item, types.TextResourceContents)
    assert item.mime_type == "application/json"
    assert item.uri == uri
    return json.loads(item.text)


async def _error(client: Client, uri: str) -> MCPError:
    with pytest.raises(MCPError) as info:
        await client.read_resource(uri)
    return info.value


@pytest.mark.parametrize(("transport", "mode"), COMBOS, ids=IDS)
async def test_e2e_catalog_levels_errors_completion_then_notifications(
    transport: Transport, mode: Mode, folder: Path
) -> None:
    """One server per transport and era (a server's start is most of what a test costs): first
    the reads, which change nothing (`_catalog_levels_errors_completion`), then the
    notifications of changes to the folder (`_notifications`)."""
    inbox = Inbox()
    async with served(transport, mode, folder, inbox) as client:
        await _catalog_levels_errors_completion(client)
        await _notifications(client, folder, inbox)


async def _catalog_levels_errors_completion(client: Client) -> None:
    assert client.server_capabilities.resources is not None
    assert client.server_capabilities.resources.subscribe is True
    assert client.server_capabilities.resources.list_changed is True
    assert client.server_capabilities.completions is not None

    # Listed at once (each file `indexing` until probed): the sizes and errors once read.
    await settled(client, await host_of(client))
    resources = await _all_resources(client)
    assert len(resources) == 4
    assert len({r.uri for r in resources}) == 4
    by_name = {r.meta["file_type"] + ":" + r.uri for r in resources if r.meta}
    assert len(by_name) == 4
    deck = next(r for r in resources if r.meta and r.meta.get("page_count") == 3)
    assert deck.mime_type == "application/json"
    assert deck.annotations is not None
    assert deck.annotations.last_modified
    host = deck.uri.split("/")[2]
    assert host == "local.dpe.docs"

    templates = (await client.list_resource_templates()).resource_templates
    assert {t.uri_template for t in templates} == {
        f"dpe://{host}/{{doc_ref}}/pages/{{page_index}}",
        f"dpe://{host}/{{doc_ref}}/elements/{{element_id}}",
    }

    level0 = await _json(client, f"dpe://{host}")
    assert level0["total_count"] == 4
    locked = next(d for d in level0["documents"] if d["file_type"] == "docx" and "error" in d)
    assert locked["error"]["kind"] == "encrypted"
    assert locked["page_count"] == 0

    level1 = await _json(client, deck.uri + "?depth=pages")
    assert level1["page_count"] == 3
    assert [p["title"] for p in level1["pages"]] == ["Alpha", "Beta", "Gamma"]
    level2 = await _json(client, deck.uri + "/pages/1")
    assert level2["title"] == "Beta"
    element_id = level2["elements"][0]["element_id"]
    level3 = await _json(client, f"{deck.uri}/elements/{element_id}")
    assert level3["page_index"] == 1

    for uri in (
        f"dpe://{host}",
        deck.uri,
        deck.uri + "/pages/1",
        f"{deck.uri}/elements/{element_id}",
    ):
        for fmt, mime in (("markdown", "text/markdown"), ("text", "text/plain")):
            res = await client.read_resource(f"{uri}?format={fmt}")
            item = res.contents[0]
            assert isinstance(item, types.TextResourceContents)
            assert item.mime_type == mime
            assert item.text.strip()
    md = (await client.read_resource(deck.uri + "/pages/1?format=markdown")).contents[0]
    assert isinstance(md, types.TextResourceContents)
    assert md.text.startswith("# Beta")

    not_found = -32602 if _modern(client) else -32002
    err = await _error(client, deck.uri + "/pages/x")
    assert (err.error.code, err.error.data["dpe_code"]) == (-32602, 4204)
    assert "sub-path" in err.error.data["reason"]
    err = await _error(client, f"dpe://{host}/no-such-doc")
    assert (err.error.code, err.error.data["dpe_code"]) == (not_found, 4201)
    err = await _error(client, deck.uri + "/pages/3")
    assert (err.error.code, err.error.data["dpe_code"]) == (not_found, 4202)
    assert err.error.data["page_count"] == 3
    err = await _error(client, deck.uri + "/elements/p0-tbl99")
    assert (err.error.code, err.error.data["dpe_code"]) == (not_found, 4203)
    err = await _error(client, "dpe://other.host/x")
    assert err.error.data["dpe_code"] == 4201

    page_ref = types.ResourceTemplateReference(
        type="ref/resource", uri=f"dpe://{host}/{{doc_ref}}/pages/{{page_index}}"
    )
    el_ref = types.ResourceTemplateReference(
        type="ref/resource", uri=f"dpe://{host}/{{doc_ref}}/elements/{{element_id}}"
    )
    refs = await client.complete(page_ref, {"name": "doc_ref", "value": "rep"})
    assert len(refs.completion.values) == 2
    assert all(v.startswith("report-") for v in refs.completion.values)
    assert refs.completion.total == 2
    assert refs.completion.has_more is False
    doc_ref = level1["doc_ref"]
    pages = await client.complete(
        page_ref, {"name": "page_index", "value": ""}, {"doc_ref": doc_ref}
    )
    assert pages.completion.values == ["0", "1", "2"]
    none = await client.complete(page_ref, {"name": "page_index", "value": ""})
    assert none.completion.values == []
    ids = await client.complete(
        el_ref, {"name": "element_id", "value": ""}, {"doc_ref": doc_ref, "page_index": "1"}
    )
    assert ids.completion.values
    assert all(v.startswith("p1-") for v in ids.completion.values)


async def _next_event(sub: Any, timeout: float = 15.0) -> Any:
    with anyio.fail_after(timeout):
        return await sub.__anext__()


async def _notifications(client: Client, folder: Path, inbox: Inbox) -> None:
    resources = await _all_resources(client)
    deck = next(r for r in resources if r.meta and r.meta.get("page_count") == 3)
    await settled(client, deck.uri.split("/")[2])
    inbox.items.clear()  # what the warm-up announced: only the changes below count
    page_uri = deck.uri + "/pages/0?format=markdown"
    if not _modern(client):
        await client.subscribe_resource(deck.uri)
        await client.subscribe_resource(page_uri)
        write_deck(folder / "a" / "report.pptx", ["Changed", "Beta", "Gamma", "Delta"])
        await inbox.wait_for(is_updated(deck.uri))
        await inbox.wait_for(is_updated(page_uri))
        # The list shows its page count and title. Each step waits for the announcement that
        # shows it, not for the next list_changed: the warm-up's own announcement comes after
        # its last document is extracted (what `settled` sees), so it may arrive after the
        # inbox was emptied, and each wait then took the announcement of the step before.
        await _announced(client, inbox, lambda files: files.get("a/report.pptx") == 4)
        level1 = await _json(client, deck.uri)
        assert level1["page_count"] == 4
        write_deck(folder / "c.pptx", ["New"])
        await _announced(client, inbox, lambda files: "c.pptx" in files)
        (folder / "c.pptx").rename(folder / "d.pptx")
        await _announced(client, inbox, lambda files: "d.pptx" in files and "c.pptx" not in files)
        (folder / "d.pptx").unlink()
        await _announced(client, inbox, lambda files: "d.pptx" not in files)
        shutil.move(str(folder / "b"), str(folder.parent / "moved-out"))
        await _announced(client, inbox, lambda files: "b/report.pptx" not in files)
    else:
        async with client.listen(
            resources_list_changed=True, resource_subscriptions=[deck.uri, page_uri]
        ) as sub:
            write_deck(folder / "a" / "report.pptx", ["Changed", "Beta", "Gamma", "Delta"])
            events = [await _next_event(sub) for _ in range(3)]
            # The list shows the deck's page count and title, which changed too.
            assert type(events[0]).__name__ == "ResourcesListChanged"
            assert {e.uri for e in events[1:]} == {deck.uri, page_uri}
            level1 = await _json(client, deck.uri)
            assert level1["page_count"] == 4
            write_deck(folder / "c.pptx", ["New"])
            event = await _next_event(sub)
            assert type(event).__name__ == "ResourcesListChanged"
            (folder / "c.pptx").unlink()
            event = await _next_event(sub)
            assert type(event).__name__ == "ResourcesListChanged"


async def _announced(client: Client, inbox: Inbox, shows: Callable[[dict[str, Any]], bool]) -> None:
    """Wait for a list_changed after which resources/list `shows` the change (its files by
    path in the folder, with their page counts): one announced before it is passed over."""
    while True:
        await inbox.wait_for(is_list_changed)
        files: dict[str, Any] = {}
        cursor: str | None = None
        while True:
            listed = await client.list_resources(cursor=cursor, cache_mode="refresh")
            for r in listed.resources:
                meta = r.meta or {}
                files[str(meta["file_uri"]).split("/docs/", 1)[1]] = meta.get("page_count")
            cursor = listed.next_cursor
            if not cursor:
                break
        if shows(files):
            return


async def test_e2e_three_http_clients_all_notified(folder: Path) -> None:
    with http_server(folder) as server:
        inboxes = [Inbox(), Inbox()]
        async with (
            connect("http", "legacy", folder, url=server.url, inbox=inboxes[0]) as c1,
            connect("http", "legacy", folder, url=server.url, inbox=inboxes[1]) as c2,
            connect("http", "auto", folder, url=server.url) as c3,
        ):
            await settled(c1, await host_of(c1))  # the encrypted docx listed as such
            deck = next(
                r
                for r in await _all_resources(c1)
                if r.meta and r.meta.get("file_type") == "docx" and "error" not in r.meta
            )
            await settled(c1, deck.uri.split("/")[2])
            await c1.subscribe_resource(deck.uri)
            await c2.subscribe_resource(deck.uri)
            async with c3.listen(resource_subscriptions=[deck.uri]) as sub:
                write_doc(folder / "notes.docx", ["Intro", "Changed"])
                await inboxes[0].wait_for(is_updated(deck.uri))
                await inboxes[1].wait_for(is_updated(deck.uri))
                assert (await _next_event(sub)).uri == deck.uri
