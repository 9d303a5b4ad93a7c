"""The `search` tool under load (issue 14, item 3): the query is bounded, the matching runs in a
worker thread so other requests are served meanwhile, and a search that runs out of time
says its results are partial. Through the real MCP interface (SDK Client, in process)."""

from __future__ import annotations

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

from dpe_server.isolation.backends import ThreadBackend
from dpe_server.model.tree import Element
from dpe_server.read import search as search_module
from dpe_server.surface.app import Settings, build_server
from tests.e2e.harness import make_folder

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

HOST = "local.dpe.search"
WAIT = 20.0
"""Seconds a test waits for an event that should come at once (a failure, never a pace)."""


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[Client]:
    folder = make_folder(tmp_path / "docs")  # aged: the locked file is not retried
    server = build_server(
        Settings(root=folder, host=HOST, watch=False, cache=False, backend=ThreadBackend())
    )
    async with Client(server, mode="legacy", cache=None) as connected:
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
    assert body["partial"] is False
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
    """The matching of one element is held until a Level 0 read has been answered. On the
    event loop that read could never run (the search used to match there): it must be
    answered while the search is held, and the search finish after it."""
    matching, read_answered = threading.Event(), threading.Event()
    held_in_vain: list[bool] = []
    real_text_of = search_module._text_of

    def held_text_of(element: Element) -> str:
        if not matching.is_set():
            matching.set()
            if not read_answered.wait(WAIT):
                held_in_vain.append(True)
        return real_text_of(element)

    monkeypatch.setattr(search_module, "_text_of", held_text_of)
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


async def test_search_out_of_time_says_its_results_are_partial(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    is_error, text = await _search(client, query="bullet")
    assert not is_error, text
    whole = json.loads(text)
    assert whole["partial"] is False
    assert "note" not in whole
    monkeypatch.setattr(search_module, "SEARCH_BUDGET_SECONDS", -1.0)  # spent before it starts
    is_error, text = await _search(client, query="bullet")
    assert not is_error, text
    cut = json.loads(text)
    assert cut["partial"] is True
    assert "having looked through 1 of 4 documents" in cut["note"]
    assert cut["total"] <= whole["total"]


async def test_search_ranks_the_same_whatever_the_chunk_size(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = {"query": "bullet about", "limit": 3}
    _, one_chunk = await _search(client, **args)
    monkeypatch.setattr(search_module, "SEARCH_CHUNK_ELEMENTS", 1)  # a thread hop per page
    _, many_chunks = await _search(client, **args)
    assert json.loads(many_chunks) == json.loads(one_chunk)
    assert json.loads(one_chunk)["total"] == 4  # one bullet per slide, four slides
