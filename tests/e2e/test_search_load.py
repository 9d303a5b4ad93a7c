"""Costly searches beside other sessions' reads, against a real `serve --transport http`
(issue 31, item 3): searches run on connections of their own, at most `SEARCHES` at once, and
past that a search is answered "busy" at once; another session's page reads do not wait for
them. How much a read slows beside them (the cores are shared) is not asserted here: a test's
timing is the machine's; that reads never wait on a search is shown without a clock by
`tests/catalog/test_search_index.py` (searches held inside the index)."""

from __future__ import annotations

import contextlib
import itertools
import random
import string
import time
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from dpe_server.catalog.sqlite import SEARCHES
from dpe_server.read.search import SEARCH_MAX_TERMS
from dpe_server.surface.errors import RATE_LIMITED
from tests.e2e.harness import connect, host_of, http_server, settled

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

SEARCHERS = 20
PREFIXES = (string.ascii_lowercase + string.digits)[:SEARCH_MAX_TERMS]
WORST = " ".join(f"{c}*" for c in PREFIXES)
"""The costliest query the bounds allow: 32 one-character prefixes (every word the index holds
begins with one of them: FTS5 merges the lists of all of them)."""
FIRST_UNCACHED = 128
"""Extraction leaves a document's first 128 pages in memory (`Index._adopt`): a first read of
a later page is an uncached Level 2 read, from the store."""
ROUNDS = 2
READS = 4
"""Reads under load in each round."""
BOOK_PAGES = FIRST_UNCACHED + 5 + ROUNDS * READS


def words_docs(folder: Path) -> None:
    """Four documents of 600 paragraphs of 60 words each, from a vocabulary of 20,000 random
    words (seeded), whose first characters are every prefix of `WORST`."""
    from docx import Document

    rng = random.Random(31)
    vocabulary = [
        c + "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(2, 8)))
        for c in PREFIXES
        for _ in range(20_000 // len(PREFIXES))
    ]
    for n in range(4):
        doc = Document()
        for _ in range(600):
            doc.add_paragraph(" ".join(rng.choice(vocabulary) for _ in range(60)))
        doc.save(str(folder / f"words{n}.docx"))


def book(path: Path, pages: int = BOOK_PAGES) -> None:
    """`pages` chapters (pages), each a heading and 40 paragraphs of 30 words: a page
    read is some work (tens of milliseconds), not only a round trip."""
    from docx import Document

    rng = random.Random(32)
    doc = Document()
    doc.core_properties.title = "The Book"
    for i in range(pages):
        doc.add_heading(f"Chapter {i}", level=1)
        for _ in range(40):
            doc.add_paragraph(" ".join(rng.choice(("alpha", "beta", "gamma")) for _ in range(30)))
    doc.save(str(path))


async def read_page(client: Client, host: str, ref: str, index: int) -> float:
    start = time.perf_counter()
    res = await client.read_resource(f"dpe://{host}/{ref}/pages/{index}")
    assert isinstance(res.contents[0], types.TextResourceContents)
    return time.perf_counter() - start


async def worst_search(
    client: Client, answered: anyio.Event, outcomes: list[tuple[str, float]]
) -> None:
    """One worst-case search: what it got ("found", "busy", or what else) and when."""
    try:
        result = await client.call_tool("search", {"query": WORST})
        outcome = "error" if result.is_error else "found"
    except MCPError as exc:
        busy = exc.code == RATE_LIMITED and exc.message.endswith("search again in a moment.")
        outcome = "busy" if busy else repr(exc.error)
    outcomes.append((outcome, time.perf_counter()))
    if len(outcomes) == SEARCHERS - SEARCHES:
        answered.set()


async def test_costly_searches_of_twenty_sessions_do_not_delay_another_sessions_page_reads(
    tmp_path: Path,
) -> None:
    """Twenty sessions each send the costliest search at once: `SEARCHES` of them run, the
    others are told at once that the server is busy; meanwhile another session's uncached
    page reads are all answered before the first of the running searches is (each search
    takes seconds on 2 cores, 4 reads a fraction of one). One connection behind one lock made
    the first read wait for a whole search, and 20 searches delayed reads by 8-13 s."""
    folder = tmp_path / "docs"
    folder.mkdir()
    words_docs(folder)
    book(folder / "book.docx")
    with http_server(folder) as server:
        async with connect("http", "legacy", folder, url=server.url, read_timeout=120) as reader:
            host = await host_of(reader)
            await settled(reader, host, timeout=300)
            docs = (await reader.list_resources()).resources
            ref = next(d.uri for d in docs if d.name == "The Book").split("/")[3]
            pages = iter(range(FIRST_UNCACHED, BOOK_PAGES))  # each read once: uncached
            for index in itertools.islice(pages, 5):
                await read_page(reader, host, ref, index)  # warm up the code paths
            rounds: list[tuple[list[tuple[str, float]], float]] = []
            for _ in range(ROUNDS):
                answered = anyio.Event()
                outcomes: list[tuple[str, float]] = []
                async with contextlib.AsyncExitStack() as stack:
                    searchers = [
                        await stack.enter_async_context(
                            connect("http", "legacy", folder, url=server.url, read_timeout=300)
                        )
                        for _ in range(SEARCHERS)
                    ]
                    async with anyio.create_task_group() as tg:
                        for client in searchers:
                            tg.start_soon(worst_search, client, answered, outcomes)
                        await answered.wait()  # the others run: the server said it is busy
                        for _ in range(READS):
                            await read_page(reader, host, ref, next(pages))
                        reads_done = time.perf_counter()
                rounds.append((outcomes, reads_done))
            for outcomes, reads_done in rounds:
                ran = [at for outcome, at in outcomes if outcome == "found"]
                assert reads_done < min(ran), ("a read waited for a search", outcomes, reads_done)
                # The others were told at once that the server is busy.
                assert (
                    sorted(o for o, _ in outcomes)
                    == ["busy"] * (SEARCHERS - SEARCHES) + ["found"] * SEARCHES
                ), outcomes
