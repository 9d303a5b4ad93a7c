"""The `search` tool through the real MCP interface (SDK Client, in process): the query is
bounded (issue 14), the index is read in a worker thread so other requests are served
meanwhile, and the inputs of issue 21 (category, doc_ref, cursor) reach the index."""

from __future__ import annotations

import base64
import contextlib
import json
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from dpe_server.catalog import textquery
from dpe_server.isolation.backends import ThreadBackend
from dpe_server.read.search import SearchBusy, SearchSlots
from dpe_server.surface.app import Settings, build_server
from dpe_server.surface.errors import RATE_LIMITED
from tests.e2e.harness import (
    Inbox,
    connect,
    host_of,
    is_list_changed,
    is_updated,
    make_folder,
    settled,
    write_deck,
)

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

HOST = "local.dpe.search"
WAIT = 20.0
"""Seconds a test waits for an event that should come at once (a failure, never a pace)."""


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder for the tests of `client`: none changes it."""
    return make_folder(tmp_path_factory.mktemp("search") / "docs")  # aged: not retried


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Their servers' cache, shared: the folder is extracted once, not once per test."""
    return tmp_path_factory.mktemp("search-cache")


@pytest.fixture
async def client(folder: Path, cache_dir: Path) -> AsyncIterator[Client]:
    settings = Settings(
        root=folder, host=HOST, watch=False, cache_dir=cache_dir, backend=ThreadBackend()
    )
    server = build_server(settings)
    async with Client(server, mode="legacy", cache=None) as connected:
        with anyio.fail_after(WAIT):
            await server.app.catalog.warmed.wait()  # every document's words are in the index
        yield connected


async def _search(client: Client, **args: Any) -> tuple[bool, str]:
    result = await client.call_tool("search", args)
    item = result.content[0]
    assert isinstance(item, types.TextContent)
    return bool(result.is_error), item.text


@pytest.mark.parametrize(
    ("query", "words"),
    [
        ("x" * 60_000, "The query is 60,000 characters long; give at most 1,000 characters"),
        ("a " * 501, "The query is 1,002 characters long; give at most 1,000 characters"),
        (" ".join(f"w{i}" for i in range(33)), "The query has 33 distinct words; give at most 32."),
        ("   ", "The query is empty"),
    ],
    ids=["60k-chars", "1002-chars", "33-words", "empty"],
)
async def test_search_query_out_of_bounds_gets_one_clear_sentence(
    client: Client, query: str, words: str
) -> None:
    is_error, text = await _search(client, query=query)
    assert is_error
    assert text.startswith(words)
    assert text.count(".") == 1
    assert "\n" not in text


async def test_search_at_the_bounds_is_answered(client: Client) -> None:
    repeated = " ".join(["bullet"] * 100 + [f"w{i}" for i in range(31)])  # 32 distinct words
    is_error, text = await _search(client, query=repeated[:1000])
    assert not is_error, text
    is_error, text = await _search(client, query="BULLET bullet about beta", limit="1")
    assert not is_error, text
    body = json.loads(text)
    assert body["indexing"] is False
    assert len(body["results"]) == 1
    assert "/elements/p1-" in body["results"][0]["uri"]
    is_error, text = await _search(client, query="beta", limit="9" * 5000)
    assert not is_error, text  # a limit past 100 is clamped, however many digits
    is_error, text = await _search(client, query="beta", limit="ten")
    assert is_error
    assert text == "limit must be an integer from 1 to 100."


async def test_other_requests_are_served_while_a_search_is_matching(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index lookup is held until a Level 0 read has been answered. On the event loop that
    read could never run: it must be answered while the search is held, and the search finish
    after it."""
    matching, read_answered = threading.Event(), threading.Event()
    held_in_vain: list[bool] = []
    real_search = textquery.search

    def held_search(*args: Any) -> Any:
        matching.set()
        if not read_answered.wait(WAIT):
            held_in_vain.append(True)
        return real_search(*args)

    monkeypatch.setattr(textquery, "search", held_search)
    await client.list_resources()  # the catalog is ready
    finished: list[str] = []

    async def search() -> None:
        is_error, text = await _search(client, query="bullet about beta")
        assert not is_error, text
        assert json.loads(text)["total"] >= 1
        finished.append("search")

    async with anyio.create_task_group() as tg:
        tg.start_soon(search)
        assert await anyio.to_thread.run_sync(matching.wait, WAIT)
        catalog = await client.read_resource(f"dpe://{HOST}")
        assert isinstance(catalog.contents[0], types.TextResourceContents)
        finished.append("read")
        read_answered.set()
    assert not held_in_vain, "the Level 0 read was not answered while the search was matching"
    assert finished == ["read", "search"]


async def _all(client: Client, **args: Any) -> list[dict[str, Any]]:
    """Every result of a search, page by page through its cursors."""
    results: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        is_error, text = await _search(client, **args, **({"cursor": cursor} if cursor else {}))
        assert not is_error, text
        body = json.loads(text)
        results += body["results"]
        cursor = body.get("next_cursor")
        if cursor is None:
            return results


async def test_search_tool_filters_pages_and_snippets(client: Client) -> None:
    await client.list_resources()
    is_error, text = await _search(client, query="bullet", limit=2)
    assert not is_error, text
    first = json.loads(text)
    assert first["total"] == 4  # one bullet per slide, four slides
    assert len(first["results"]) == 2
    assert set(first["results"][0]) == {"uri", "title", "page_index", "category", "snippet"}
    assert "**Bullet**" in first["results"][0]["snippet"]
    paged = await _all(client, query="bullet", limit=1)
    assert [r["uri"] for r in paged[:2]] == [r["uri"] for r in first["results"]]
    assert len({r["uri"] for r in paged}) == 4
    ref = paged[-1]["uri"].split("/")[3]
    one = await _all(client, query="bullet", doc_ref=ref)
    assert {r["uri"].split("/")[3] for r in one} == {ref}
    assert await _all(client, query="bullet", file_type="docx") == []
    assert {r["category"] for r in await _all(client, query="beta", category="heading")} == {
        "heading"
    }
    is_error, text = await _search(client, query="bullet", category="chart, headline")
    assert is_error
    assert text.startswith("Unknown category 'headline'; the categories are text, heading")
    is_error, text = await _search(client, query="bullet", cursor="x")
    assert is_error
    assert text.startswith("The cursor is not one this search gave")


def _cursor_with(cursor: str, **numbers: int) -> str:
    """`cursor` (one a search gave) with its numbers replaced."""
    data = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    raw = json.dumps(data | numbers).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


@pytest.mark.parametrize("numbers", [{"after": 2**63}, {"skip": 2**64}, {"after": 10**400}])
async def test_a_cursor_past_sqlite_integers_is_refused_as_one_not_given(
    client: Client, numbers: dict[str, int]
) -> None:
    """A cursor's numbers are SQLite integers: a larger one is no cursor this search gave,
    said as for any other, not JSON-RPC error 0 with Python's OverflowError."""
    is_error, text = await _search(client, query="bullet", limit=1)
    assert not is_error, text
    cursor = _cursor_with(json.loads(text)["next_cursor"], **numbers)
    is_error, text = await _search(client, query="bullet", limit=1, cursor=cursor)
    assert is_error
    assert text.startswith("The cursor is not one this search gave"), text


async def test_a_nul_in_a_query_separates_words(client: Client) -> None:
    """FTS5 ended the query at a NUL ("unterminated string": the index "could not be read");
    it separates words, as the tokenizer takes it."""
    is_error, text = await _search(client, query="bullet\0about")
    assert not is_error, text
    assert json.loads(text)["total"] == 4
    is_error, text = await _search(client, query="\0")
    assert is_error
    assert text.startswith("The query is empty")


async def test_a_search_past_the_servers_slots_is_answered_busy(
    folder: Path, cache_dir: Path
) -> None:
    """Past the searches the server runs at once, a search gets JSON-RPC error -32000 with a
    sentence saying to search again, as a completion over the rate does."""
    settings = Settings(
        root=folder, host=HOST, watch=False, cache_dir=cache_dir, backend=ThreadBackend()
    )
    server = build_server(settings)
    server.app.toolbox.slots = SearchSlots(server=0)
    async with Client(server, mode="legacy", cache=None) as connected:
        with pytest.raises(MCPError) as refused:
            await connected.call_tool("search", {"query": "bullet"})
    assert refused.value.code == RATE_LIMITED
    assert refused.value.message == (
        "The server is running 0 searches already (its most at once); search again in a moment."
    )


def test_search_slots_bound_each_session_and_the_server() -> None:
    slots = SearchSlots(server=3, session=2)
    with contextlib.ExitStack() as held:
        held.enter_context(slots.slot("a"))
        held.enter_context(slots.slot("a"))
        with pytest.raises(SearchBusy, match=r"^This session has 2 searches running already"):
            held.enter_context(slots.slot("a"))
        held.enter_context(slots.slot("b"))
        with pytest.raises(SearchBusy, match=r"^The server is running 3 searches already"):
            held.enter_context(slots.slot("c"))
    with slots.slot("c"), slots.slot("c"):  # every slot given back
        pass


@pytest.mark.parametrize(
    ("query", "found"),
    [('"bullet', 4), ("AND(", 0), ('NEAR("x" "', 0), ("'; DROP TABLE live; --", 0)],
)
async def test_search_tool_takes_hostile_queries_literally(
    client: Client, query: str, found: int
) -> None:
    is_error, text = await _search(client, query=query)
    assert not is_error, text
    assert json.loads(text)["total"] == found
    is_error, text = await _search(client, query="bullet")
    assert (is_error, json.loads(text)["total"]) == (False, 4)


async def test_search_follows_an_edit_and_a_delete_in_a_real_server(tmp_path: Path) -> None:
    """A served process (stdio): once a change is announced, a search finds the new words and
    never the old ones; once a file is gone, nothing of it."""
    folder = make_folder(tmp_path / "docs")
    inbox = Inbox()
    async with connect("stdio", "legacy", folder, inbox=inbox) as client:
        host = await host_of(client)
        await settled(client, host)
        listed = (await client.list_resources()).resources
        deck = next(r for r in listed if r.meta and r.meta.get("page_count") == 3)
        await client.subscribe_resource(deck.uri)
        write_deck(folder / "a" / "report.pptx", ["Changed", "Zeta"])
        await inbox.wait_for(is_updated(deck.uri))

        async def total(query: str) -> int:
            is_error, text = await _search(client, query=query)
            assert not is_error, text
            return int(json.loads(text)["total"])

        assert (await total("zeta"), await total("gamma")) == (2, 0)
        inbox.items.clear()  # the edit's own list_changed (the title changed)
        (folder / "a" / "report.pptx").unlink()
        await inbox.wait_for(is_list_changed)
        assert await total("zeta") == 0
