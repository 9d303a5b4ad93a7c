"""The full-text index behind `search` (issue 21): kept up to date as files are extracted,
edited, deleted and renamed (a search never returns an element of a version no longer served),
phrases and prefixes, the filters, cursor paging, Chinese, and queries that are not FTS5; on
each store: in memory, SQLite (FTS5) and PostgreSQL (`tsvector`, a server started by the
tests: skipped, saying why, where none can run)."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from dpe_server.catalog import fulltext
from dpe_server.catalog.catalog import Catalog
from dpe_server.catalog.sqlite import SqliteStore
from dpe_server.catalog.store import MemoryStore, Store
from dpe_server.isolation.backends import ThreadBackend
from dpe_server.read.search import QueryError, search
from tests.e2e.harness import write_deck, write_doc

pytestmark = pytest.mark.anyio


def _old(path: Path, second: int = 1) -> None:
    """A distinct, old modification time: a version of its own, not a half-written file."""
    os.utime(path, ns=(second * 1_000_000_000, second * 1_000_000_000))


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    write_deck(root / "deck.pptx", ["Alpha", "Budget review", "Gamma"])
    write_deck(root / "sub" / "other.pptx", ["Other budget"])
    write_doc(root / "notes.docx", ["年度预算报告", "Quarterly forecast"])
    for path in root.rglob("*.*"):
        _old(path)
    return root


def _store(request: pytest.FixtureRequest, kind: str, tmp_path: Path) -> Store:
    if kind == "memory":
        return MemoryStore()
    if kind == "sqlite":
        return SqliteStore(tmp_path / "cache")
    from dpe_server.catalog.postgres import PostgresStore

    return PostgresStore(request.getfixturevalue("pg_url"))


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
async def catalog(
    request: pytest.FixtureRequest, folder: Path, tmp_path: Path
) -> AsyncIterator[Catalog]:
    store = _store(request, request.param, tmp_path)
    catalog = Catalog(folder, "h", ThreadBackend(), store=store)
    await catalog.start()
    await catalog.warm()
    yield catalog
    store.close()


def _ref(catalog: Catalog, rel: str) -> str:
    return next(e.doc_ref for e in catalog.entries() if e.rel == rel)


async def _uris(catalog: Catalog, query: str, **args: Any) -> list[str]:
    body = await search(catalog, query, limit=100, **args)
    assert body["indexing"] is False
    assert body["total"] == len(body["results"])
    return [r["uri"] for r in body["results"]]


async def test_search_finds_elements_with_title_page_and_snippet(catalog: Catalog) -> None:
    body = await search(catalog, "review")
    ref = _ref(catalog, "deck.pptx")
    assert body["total"] == 2  # the title and the bullet of slide 1
    first = body["results"][0]
    assert first["uri"].startswith(f"dpe://h/{ref}/elements/p1-")
    assert (first["title"], first["page_index"]) == ("Alpha", 1)
    assert "**review**" in first["snippet"].lower()
    assert "next_cursor" not in body


async def test_phrases_prefixes_and_every_word(catalog: Catalog) -> None:
    assert len(await _uris(catalog, '"bullet about gamma"')) == 1
    assert await _uris(catalog, '"gamma about bullet"') == []
    assert len(await _uris(catalog, "gamma bullet")) == 1  # every word, any order
    assert len(await _uris(catalog, "gam*")) == 2  # the title and the bullet
    assert await _uris(catalog, "gam") == []  # a word, not a part of one
    assert await _uris(catalog, "amma") == []
    assert len(await _uris(catalog, "BUDGET")) == 4  # case does not matter


async def test_chinese_words_of_any_length(catalog: Catalog) -> None:
    ref = _ref(catalog, "notes.docx")
    for query in ("年度预算报告", "预算报告", "预算", "预", '"预算报告 with"'):
        uris = await _uris(catalog, query)
        assert uris, query
        assert all(u.startswith(f"dpe://h/{ref}/") for u in uris)
    assert await _uris(catalog, "预报") == []  # not a bigram of the text
    body = await search(catalog, "预算")
    assert "**预算**" in body["results"][0]["snippet"]
    body = await search(catalog, "Quarterly")
    assert body["results"][0]["snippet"] == "**Quarterly** forecast"


async def test_filters_by_file_type_category_and_document(catalog: Catalog) -> None:
    everywhere = await _uris(catalog, "budget")
    assert len(everywhere) == 4
    other = _ref(catalog, "sub/other.pptx")
    only = await _uris(catalog, "budget", doc_ref=other)
    assert len(only) == 2
    assert all(f"/{other}/" in u for u in only)
    assert await _uris(catalog, "budget", file_type="docx") == []
    assert await _uris(catalog, "budget", file_type=".PPTX") == everywhere
    headings = await search(catalog, "budget", category="heading")
    assert {r["category"] for r in headings["results"]} == {"heading"}
    assert headings["total"] == 2
    assert (await search(catalog, "budget", category="heading, list"))["total"] == 4
    with pytest.raises(QueryError, match="Unknown category 'headline'; the categories are text"):
        await search(catalog, "budget", category="headline")
    with pytest.raises(QueryError, match="No document 'nope'"):
        await search(catalog, "budget", doc_ref="nope")


async def test_counts_are_capped_and_ranking_exact_whatever_the_candidates(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = await search(catalog, "bullet", limit=3)
    bounded = await search(catalog, "budget", category="list", limit=1)
    monkeypatch.setattr(fulltext, "CANDIDATES", 0)
    monkeypatch.setattr(fulltext, "CANDIDATES_MIN", 1)  # one candidate: always too few
    assert await search(catalog, "bullet", limit=3) == whole
    assert await search(catalog, "budget", category="list", limit=1) == bounded
    monkeypatch.setattr(fulltext, "COUNT_CAP", 2)
    capped = await search(catalog, "bullet", limit=1)
    assert (capped["total"], capped["total_capped"]) == (2, True)
    assert capped["results"] == whole["results"][:1]
    assert "next_cursor" in capped
    assert "total_capped" not in whole


async def test_cursor_pages_through_every_result_once(catalog: Catalog) -> None:
    whole = await _uris(catalog, "bullet")
    assert len(whole) == 4
    seen: list[str] = []
    cursor = None
    for _ in range(4):
        body = await search(catalog, "bullet", limit=1, cursor=cursor)
        seen += [r["uri"] for r in body["results"]]
        cursor = body.get("next_cursor")
        if cursor is None:
            break
    assert seen == whole
    first = await search(catalog, "bullet", limit=1)
    with pytest.raises(QueryError, match="The cursor is not one this search gave"):
        await search(catalog, "budget", limit=1, cursor=first["next_cursor"])
    with pytest.raises(QueryError, match="The cursor is not one this search gave"):
        await search(catalog, "bullet", cursor="not a cursor")


@pytest.mark.parametrize(
    ("query", "found"),
    [
        ('"', None),
        ('bullet "', 4),  # an unclosed quote: the rest is a phrase (here, none)
        ("AND(", 0),
        ("NEAR(bullet about)", 0),
        ("bullet OR about", 0),  # OR is a word to find, not an operator
        ('" OR 1=1 --', 0),
        ("'); DROP TABLE element_rows; --", 0),
        ("text: bullet", 0),  # not a column filter
        ("^bullet", 4),  # not "first token": punctuation is not indexed
        ("{text}:x", 0),
        ("a*b", 0),
        ("%_\\", None),
        ("*", None),
        ("100%", 0),
    ],
)
async def test_hostile_queries_are_searched_as_words(
    catalog: Catalog, query: str, found: int | None
) -> None:
    if found is None:  # nothing left to look for: one clear sentence
        with pytest.raises(QueryError, match=r"^The query is empty"):
            await search(catalog, query)
    else:
        body = await search(catalog, query)
        assert body["total"] == len(body["results"]) == found
    assert len(await _uris(catalog, "bullet")) == 4  # the index is intact


async def test_index_follows_edits_deletes_and_renames(catalog: Catalog, folder: Path) -> None:
    deck = folder / "deck.pptx"
    old_ref = _ref(catalog, "deck.pptx")
    write_deck(deck, ["Alpha", "Delta"])
    _old(deck, 2)
    await catalog.rescan()
    assert await _uris(catalog, "gamma") == []  # the old version's words are gone
    assert len(await _uris(catalog, "delta")) == 2
    assert len(await _uris(catalog, "alpha")) == 2

    deck.rename(folder / "renamed.pptx")
    await catalog.rescan()
    await catalog.warm()
    new_ref = _ref(catalog, "renamed.pptx")
    uris = await _uris(catalog, "delta")
    assert len(uris) == 2
    assert all(f"/{new_ref}/" in u for u in uris)
    assert not any(f"/{old_ref}/" in u for u in await _uris(catalog, "bullet"))

    (folder / "renamed.pptx").unlink()
    (folder / "notes.docx").unlink()
    await catalog.rescan()
    assert await _uris(catalog, "delta") == []
    assert await _uris(catalog, "预算") == []
    assert len(await _uris(catalog, "bullet")) == 1  # sub/other.pptx only
    # The old versions' rows are gone, not only filtered out (the rows of a store shared by
    # replicas stay: another replica may serve them still; there is no eviction there).
    store = catalog.store
    if catalog.shared is not None:
        return
    db = store._text if isinstance(store, MemoryStore) else store._db  # type: ignore[attr-defined]
    indexed = {key for (key,) in db.execute("SELECT DISTINCT key FROM element_rows")}
    assert indexed == {e.served_key for e in catalog.entries() if e.outline is not None}


@pytest.mark.parametrize("kind", ["memory", "sqlite", "postgresql"])
async def test_documents_not_yet_extracted_are_announced(
    folder: Path, tmp_path: Path, request: pytest.FixtureRequest, kind: str
) -> None:
    store = _store(request, kind, tmp_path)
    catalog = Catalog(folder, "h", ThreadBackend(), store=store)
    await catalog.start()  # probed, not extracted
    body = await search(catalog, "gamma")
    assert body["indexing"] is True
    assert body["note"].startswith("3 documents not extracted yet")
    await catalog.page(_ref(catalog, "sub/other.pptx"), 0)  # one page read: its words are found
    assert (await search(catalog, "other"))["total"] == 2
    assert (await search(catalog, "other"))["note"].startswith("3 documents not extracted yet")
    single = await search(catalog, "gamma", doc_ref=_ref(catalog, "deck.pptx"))
    assert (single["total"], single["indexing"]) == (2, False)  # one document: extracted first
    await catalog.warm()
    done = await search(catalog, "budget")
    assert (done["indexing"], done["total"]) == (False, 4)
    assert "note" not in done
    store.close()


async def test_a_restart_searches_the_persistent_index(folder: Path, tmp_path: Path) -> None:
    first = SqliteStore(tmp_path / "cache")
    catalog = Catalog(folder, "h", ThreadBackend(), store=first)
    await catalog.start()
    await catalog.warm()
    expected = await _uris(catalog, "budget")
    first.close()
    again = SqliteStore(tmp_path / "cache")
    restarted = Catalog(folder, "h", ThreadBackend(), store=again)
    await restarted.start()  # no warm-up: everything comes from the cache
    assert await _uris(restarted, "budget") == expected
    again.close()


async def test_a_failed_update_of_the_served_versions_is_made_good(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The database refuses to record which versions are served (busy past its timeout, say):
    the search fills that table again instead of missing every document."""
    store = SqliteStore(tmp_path / "cache")
    catalog = Catalog(folder, "h", ThreadBackend(), store=store)
    await catalog.start()
    await catalog.warm()
    real_serve, failures = fulltext.serve, [sqlite3.OperationalError("database is locked")]

    def busy_once(*args: Any) -> None:
        if failures:
            raise failures.pop()
        real_serve(*args)

    monkeypatch.setattr(fulltext, "serve", busy_once)
    assert (await search(catalog, "budget"))["total"] == 4
    assert failures == []  # it was refused once
    store.close()


@pytest.mark.parametrize(
    "text",
    [
        "Café au lait, e-mail ½ 3.14 1e5 x_y 2024-01-02",
        "Straße naïve İstanbul ΣΊΣΥΦΟΣ ς µ Ǻngström cafe\u0301 Œuvre ĳ",
        "年度预算报告 한국어 テスト カタカナ 漢字 预",
        "हिन्दी भाषा ภาษาไทย العربية עברית",
        "'quoted' \"double\" (paren) [x] {y} <z> a/b\\c a&b a|b !not :*",
    ],
)
def test_postgresql_cuts_the_words_sqlite_cuts(text: str) -> None:
    """`pgtext.words` (a PostgreSQL store's words) against FTS5's unicode61 tokenizer on the
    same segmented text: the same words in the same order, so both stores find the same."""
    from dpe_server.catalog import pgtext

    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='unicode61 remove_diacritics 2')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    db.execute("INSERT INTO t (rowid, x) VALUES (1, ?)", (fulltext.segment(text),))
    sqlite_words = [term for (term,) in db.execute("SELECT term FROM v ORDER BY offset")]
    assert pgtext.words(fulltext.segment(text)) == sqlite_words
