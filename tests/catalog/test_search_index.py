"""The full-text index behind `search` (issue 21): kept up to date as files are extracted,
edited, deleted and renamed (a search never returns an element of a version no longer served),
phrases and prefixes, the filters, cursor paging, Chinese, and queries that are not FTS5; on
each store: in memory, SQLite (FTS5) and PostgreSQL (`tsvector`, a server started by the
tests: skipped, saying why, where none can run)."""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from dpe_server.catalog import fulltext, ranking, textquery
from dpe_server.catalog import sqlite as sqlite_store
from dpe_server.catalog.catalog import Catalog
from dpe_server.catalog.sqlite import SqliteStore
from dpe_server.catalog.store import MemoryStore, Outline, Store
from dpe_server.isolation.backends import ThreadBackend
from dpe_server.model.errors import extraction_error
from dpe_server.model.tree import Category, Element, Page
from dpe_server.read.search import QueryError, search
from tests.e2e.harness import write_deck, write_doc

pytestmark = pytest.mark.anyio


def _old(path: Path, second: int = 1) -> None:
    """A distinct, old modification time: a version of its own, not a half-written file."""
    os.utime(path, ns=(second * 1_000_000_000, second * 1_000_000_000))


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("written") / "docs"
    write_deck(root / "deck.pptx", ["Alpha", "Budget review", "Gamma"])
    write_deck(root / "sub" / "other.pptx", ["Other budget"])
    write_doc(root / "notes.docx", ["年度预算报告", "Quarterly forecast"])
    return root


@pytest.fixture
def folder(written: Path, tmp_path: Path) -> Path:
    """A copy, for the test, of the three documents written once for the module."""
    root = Path(shutil.copytree(written, tmp_path / "docs"))
    for path in root.rglob("*.*"):
        _old(path)
    return root


def store_of_kind(request: pytest.FixtureRequest, kind: str, tmp_path: Path) -> Store:
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
    store = store_of_kind(request, request.param, tmp_path)
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


async def test_counts_are_capped_and_a_common_word_ranked_window_by_window(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = await search(catalog, "bullet", limit=3)
    assert (whole["total"], "total_capped" in whole) == (4, False)
    monkeypatch.setattr(textquery, "WINDOW", 2)
    capped = await search(catalog, "bullet", limit=100)
    assert (capped["total"], capped["total_capped"]) == (2, True)
    assert len(capped["results"]) == 4  # every match, two windows
    assert "next_cursor" not in capped
    assert await search(catalog, "bullet", limit=100) == capped


TEXTS = (
    "revenue alpha beta gamma delta epsilon",
    "revenue",
    "revenue alpha beta",
    "revenue revenue",
    "revenue alpha beta gamma",
    "zeta revenue",
    "revenue alpha",
)


def _index(texts: tuple[str, ...] = TEXTS) -> sqlite3.Connection:
    """An index of two documents: `texts` as their elements, in turn (text, then heading)."""
    db = fulltext.connect_memory()
    for doc in ("a", "b"):
        elements = tuple(
            Element(f"p0-{doc}{i}", Category.TEXT if i % 2 else Category.HEADING, "", {"text": t})
            for i, t in enumerate(texts)
        )
        with fulltext.transaction(db):
            fulltext.put_pages(db, f"key-{doc}", [Page(0, "", elements)])
    fulltext.serve(db, [("key-a", "a", "docx"), ("key-b", "b", "pdf")], ())
    return db


def _expected(
    db: sqlite3.Connection, scope: textquery.Scope, window: int, query: str = "revenue"
) -> list[str]:
    """The rule of `textquery.search`: the matches in scope in index order, cut into windows,
    each ranked by FTS5's own BM25 (over the whole index), ties by rowid."""
    rows = db.execute(
        "SELECT r.element_id, r.category, live.doc_ref, element_text.rowid, "
        "bm25(element_text) FROM element_text JOIN element_rows r ON r.id = element_text.rowid "
        "JOIN live ON live.key = r.key WHERE element_text MATCH ? ORDER BY element_text.rowid",
        (textquery.TextQuery.parse(query).fts(),),
    ).fetchall()
    kept = [
        (score, row_id, f"{ref}/{eid}")
        for eid, category, ref, row_id, score in rows
        if (not scope.categories or category in scope.categories)
        and (not scope.doc_ref or ref == scope.doc_ref)
        and (not scope.file_type or {"a": "docx", "b": "pdf"}[ref] == scope.file_type)
    ]
    return [
        name
        for start in range(0, len(kept), window)
        for _, _, name in sorted(kept[start : start + window])
    ]


def _pages(db: sqlite3.Connection, scope: textquery.Scope, limit: int) -> list[str]:
    """Every result of a search for 'revenue', `limit` a page, following each next position."""
    query, at, seen = textquery.TextQuery.parse("revenue"), textquery.Position(), []
    while True:
        found = textquery.search(db, query, scope, limit, at)
        assert len(found.hits) == limit or found.next is None
        seen += [f"{h.doc_ref}/{h.element_id}" for h in found.hits]
        if found.next is None:
            return seen
        at = found.next


@pytest.mark.parametrize("window", [1, 2, 3, 5, 14, 1000])
@pytest.mark.parametrize(
    ("scope", "matches"),
    [
        (textquery.Scope(), 14),
        (textquery.Scope(categories=("heading",)), 8),
        (textquery.Scope(file_type="pdf"), 7),
        (textquery.Scope(doc_ref="a"), 7),
        (textquery.Scope(categories=("text",), doc_ref="b"), 3),
    ],
    ids=["all", "category", "file_type", "doc_ref", "both"],
)
def test_ranking_is_bm25_within_windows_of_matches_in_index_order(
    monkeypatch: pytest.MonkeyPatch, window: int, scope: textquery.Scope, matches: int
) -> None:
    db = _index()
    monkeypatch.setattr(textquery, "WINDOW", window)
    expected = _expected(db, scope, window)
    assert len(expected) == matches
    for limit in (1, 2, 3, 100):  # however it is paged, every match once, in the same order
        assert _pages(db, scope, limit) == expected
    query = textquery.TextQuery.parse("revenue")
    found = textquery.search(db, query, scope, 100, textquery.Position())
    assert (found.total, found.capped) == (min(len(expected), window), len(expected) > window)


def test_few_matches_are_in_exact_bm25_order() -> None:
    """At most `WINDOW` matches: one window, so the order is BM25's over all of them (the
    shortest element holding the word twice first, the longest last)."""
    db = _index()
    found = textquery.search(
        db,
        textquery.TextQuery.parse("revenue"),
        textquery.Scope(doc_ref="a"),
        100,
        textquery.Position(),
    )
    texts = [TEXTS[int(h.element_id.removeprefix("p0-a"))] for h in found.hits]
    assert texts[0] == "revenue revenue"
    assert texts[-1] == TEXTS[0]
    expected = _expected(db, textquery.Scope(doc_ref="a"), 7)
    assert [f"a/{h.element_id}" for h in found.hits] == expected


@pytest.mark.parametrize(
    "query",
    ["alpha", "revenue alpha", '"alpha beta"', "alp*", "revenue zeta", "年度预", "预算 alpha"],
)
@pytest.mark.parametrize("counted", [10_000, 0, 1])
def test_scores_are_fts5s_bm25(monkeypatch: pytest.MonkeyPatch, query: str, counted: int) -> None:
    """The BM25 the server computes for common words (`catalog.ranking`: `counted` 0 or 1
    forces it, with every term's count estimated or, at 1, counted) orders as FTS5's `bm25()`
    does (several terms, phrases, prefixes, Chinese: a phrase of pairs ending in a prefix)."""
    monkeypatch.setattr(ranking, "COUNTED", counted)
    more = ("alpha beta alpha beta", "alphabet beta", "年度预算报告 alpha", "预算年度预算 zeta")
    db = _index(TEXTS + more)
    found = textquery.search(
        db, textquery.TextQuery.parse(query), textquery.Scope(), 100, textquery.Position()
    )
    expected = _expected(db, textquery.Scope(), 1000, query)
    assert expected  # something to order
    assert [f"{h.doc_ref}/{h.element_id}" for h in found.hits] == expected


@pytest.mark.parametrize(
    ("query", "most"),
    [
        ("revenue", 14),  # every text of both documents
        ('"alpha beta"', 6),  # beta, the rarer word (alpha: 8 rows)
        ('"revenue zeta"', 2),  # zeta
        ("alp*", 8),  # a prefix
        ("zeta", 2),
    ],
)
def test_a_phrase_is_held_by_at_most_its_rarest_words_rows(query: str, most: int) -> None:
    """A query of one phrase learns whether it is common from its rarest word's rows, not
    from checking where each word stands in every row (`ranking._most`)."""
    db = _index()
    (phrase,) = textquery.TextQuery.parse(query).phrases()
    assert ranking._most(db, phrase, 14) == most


def test_a_position_survives_elements_indexed_after_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """A next position names a place in the index (the window, by the rowid it starts after):
    a document extracted meanwhile (indexed after it) lands in the last window, and no result
    of the windows before is repeated or skipped."""
    db = _index()
    monkeypatch.setattr(textquery, "WINDOW", 5)
    query, scope = textquery.TextQuery.parse("revenue"), textquery.Scope()
    first = textquery.search(db, query, scope, 5, textquery.Position())
    assert first.next == textquery.Position(first.next.after if first.next else -1, 0)
    elements = (Element("p0-c0", Category.TEXT, "", {"text": "revenue"}),)
    with fulltext.transaction(db):
        fulltext.put_pages(db, "key-c", [Page(0, "", elements)])
    fulltext.serve(db, [("key-c", "c", "docx")], ())
    rest = _pages_from(db, first.next)
    names = [f"{h.doc_ref}/{h.element_id}" for h in first.hits] + rest
    assert len(names) == len(set(names)) == 15
    assert "c/p0-c0" in names[10:]
    assert names == _expected(db, scope, 5)


def _pages_from(db: sqlite3.Connection, at: textquery.Position) -> list[str]:
    query, seen = textquery.TextQuery.parse("revenue"), []
    next_at: textquery.Position | None = at
    while next_at is not None:
        found = textquery.search(db, query, textquery.Scope(), 3, next_at)
        seen += [f"{h.doc_ref}/{h.element_id}" for h in found.hits]
        next_at = found.next
    return seen


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


HOSTILE_QUERIES: list[tuple[str, int | None]] = [
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
]
"""Queries that are not FTS5 or SQL: each is searched as words (how many results), or is one
clear sentence when nothing is left to look for (None)."""


async def test_hostile_queries_are_searched_as_words(catalog: Catalog) -> None:
    """Every query of `HOSTILE_QUERIES` on one catalog of each store (a search changes
    nothing), the index intact after each."""
    for query, found in HOSTILE_QUERIES:
        if found is None:  # nothing left to look for: one clear sentence
            with pytest.raises(QueryError, match=r"^The query is empty"):
                await search(catalog, query)
        else:
            body = await search(catalog, query)
            assert body["total"] == len(body["results"]) == found, query
        assert len(await _uris(catalog, "bullet")) == 4, query  # the index is intact


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
    store = store_of_kind(request, kind, tmp_path)
    catalog = Catalog(folder, "h", ThreadBackend(), store=store)
    await catalog.start()  # probed, not extracted
    body = await search(catalog, "gamma")
    assert body["indexing"] is True
    assert body["note"].startswith("3 of 3 documents are still being read")
    await catalog.page(_ref(catalog, "sub/other.pptx"), 0)  # one page read: its words are found
    assert (await search(catalog, "other"))["total"] == 2
    still = (await search(catalog, "other"))["note"]
    assert still.startswith("3 of 3 documents are still being read")
    single = await search(catalog, "gamma", doc_ref=_ref(catalog, "deck.pptx"))
    assert (single["total"], single["indexing"]) == (2, False)  # one document: extracted first
    await catalog.warm()
    done = await search(catalog, "budget")
    assert (done["indexing"], done["total"]) == (False, 4)
    assert "note" not in done
    store.close()


async def test_the_documents_waiting_are_kept_as_entries_change(folder: Path) -> None:
    """`indexing` counts the entries neither current nor failed, kept up to date as their
    state changes instead of walking every entry per search."""
    catalog = Catalog(folder, "h", ThreadBackend(), store=MemoryStore())
    await catalog.start()
    assert catalog.indexing() == 3
    assert catalog.indexing("docx") == 1
    (folder / "notes.docx").unlink()
    await catalog.rescan()
    assert catalog.indexing() == 2  # a file gone is not waited for
    await catalog.warm()
    assert catalog.indexing() == 0
    deck = next(e for e in catalog.entries() if e.rel == "deck.pptx")
    outline_key = deck.outline_key
    deck.key = "another version"
    assert (catalog.indexing(), catalog.indexing(doc_ref=deck.doc_ref)) == (1, 1)
    deck.error, deck.error_key = extraction_error("corrupt", "unreadable"), deck.key
    assert catalog.indexing() == 0  # failed: nothing more to wait for
    deck.key = outline_key
    assert catalog.indexing() == 0  # current again


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


def test_versions_unused_for_long_are_evicted_when_the_cache_opens(tmp_path: Path) -> None:
    """A version no server looked up for `UNUSED_DAYS` (a file changed or removed while no
    server ran) loses its outline, pages and search rows when the cache is next opened; the
    versions served are marked used as they are served, so they stay."""
    store = SqliteStore(tmp_path / "cache")
    elements = (Element("p0-txt0", Category.TEXT, "", {"text": "revenue"}),)
    outline = Outline("T", (), "", (), {})
    for key in ("old", "served", "recent"):
        store.put_document(key, outline, [Page(0, "", elements)])
    store.serve([("served", "s", "docx")], [])
    month = sqlite_store.UNUSED_DAYS * 86400 + 60
    store._db.execute("UPDATE docs SET used = used - ?", (month,))  # type: ignore[attr-defined]
    store._kept_at -= month  # type: ignore[attr-defined]  # a month later:
    store.serve([("served", "s", "docx")], [])  # still served: marked used again
    store._db.execute("UPDATE docs SET used = ? WHERE key = 'recent'", (time.time(),))  # type: ignore[attr-defined]
    store.close()
    again = SqliteStore(tmp_path / "cache")
    assert again.evicted == 1
    assert again.lookup("old") is None
    assert again.page("old", 0) is None
    assert again.lookup("served") is not None
    assert again.lookup("recent") is not None
    keys = {k for (k,) in again._db.execute("SELECT DISTINCT key FROM element_rows")}  # type: ignore[attr-defined]
    assert keys == {"served", "recent"}
    (texts,) = again._db.execute("SELECT count(*) FROM element_text").fetchone()  # type: ignore[attr-defined]
    assert texts == 2
    again.close()


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
def test_the_server_cuts_the_words_sqlite_cuts(text: str) -> None:
    """`ranking.tokens` (a PostgreSQL store's words, and the words the server's BM25 counts)
    against FTS5's unicode61 tokenizer on the same segmented text: the same words in the same
    order, so both stores find the same and the server's scores are FTS5's."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='unicode61 remove_diacritics 2')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    db.execute("INSERT INTO t (rowid, x) VALUES (1, ?)", (fulltext.segment(text),))
    sqlite_words = [term for (term,) in db.execute("SELECT term FROM v ORDER BY offset")]
    assert ranking.tokens(fulltext.segment(text)) == sqlite_words


def _found(store: SqliteStore, query: str) -> int:
    found = store.search(
        textquery.TextQuery.parse(query), textquery.Scope(), 10, textquery.Position()
    )
    assert found is not None
    return found.total


def test_searches_read_the_rebuilt_cache_and_the_memory_one_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Searches run on connections of their own (`searchers`): once the cache file is found
    damaged and rebuilt they read the new file, not the one moved aside; and if even the
    rebuild fails, the database in memory that replaces it, with the versions served."""
    store = SqliteStore(tmp_path / "cache")
    elements = (Element("p0-txt0", Category.TEXT, "", {"text": "revenue"}),)
    outline = Outline("T", (), "", (), {})
    store.put_document("a", outline, [Page(0, "", elements)])
    store.serve([("a", "a", "docx")], [])
    assert _found(store, "revenue") == 1
    with store._lock:
        store._rebuild(sqlite3.DatabaseError("damaged"))
    assert _found(store, "revenue") == 0  # the new file holds nothing yet
    store.put_document("b", outline, [Page(0, "", elements)])
    store.serve([("b", "b", "docx")], [])
    assert _found(store, "revenue") == 1
    monkeypatch.setattr(store, "_connect", lambda: sqlite3.connect("/nonexistent/dir/x"))
    with store._lock:
        store._rebuild(sqlite3.DatabaseError("damaged again"))
    store.put_document("c", outline, [Page(0, "", elements)])
    store.serve([("c", "c", "docx")], ["b"])
    assert _found(store, "revenue") == 1  # c's, in memory: b is no longer served
    store.close()


def test_page_reads_lookups_and_writes_go_on_while_every_search_connection_is_busy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`SEARCHES` searches held inside the index (each on its own connection, in its own
    thread): meanwhile a page read, a lookup and a write of another document are answered, and
    a search past the connections waits for one, then runs once one is free. One connection
    behind one lock (before issue 31) made the read wait for every search."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    store = SqliteStore(tmp_path / "cache")
    elements = (Element("p0-txt0", Category.TEXT, "", {"text": "revenue"}),)
    outline = Outline("T", (), "", (), {})
    store.put_document("a", outline, [Page(0, "", elements)])
    store.serve([("a", "a", "docx")], [])
    held, release = threading.Semaphore(0), threading.Event()
    searching = textquery.search

    def search_held(*args: Any) -> Any:
        held.release()
        assert release.wait(30), "the test never released the searches"
        return searching(*args)

    monkeypatch.setattr(textquery, "search", search_held)
    with ThreadPoolExecutor(sqlite_store.SEARCHES + 2) as pool:
        try:
            searches = [
                pool.submit(_found, store, "revenue") for _ in range(sqlite_store.SEARCHES + 1)
            ]
            for _ in range(sqlite_store.SEARCHES):
                assert held.acquire(timeout=30), "a search never reached the index"
            assert not held.acquire(timeout=0.2), "a search ran past the connections"
            page = pool.submit(store.page, "a", 0)  # on the writer's connection
            assert page.result(timeout=30) is not None
            assert store.lookup("a") is not None
            store.put_document("b", outline, [Page(0, "", elements)])
            assert store.page("b", 0) is not None
        finally:
            release.set()
        assert [s.result(timeout=30) for s in searches] == [1] * (sqlite_store.SEARCHES + 1)
    store.close()


RANKED = (*TEXTS, "alpha beta alpha beta", "alphabet beta", "revenue alpha revenue beta zeta")
"""Elements whose scores set them apart: terms held once or twice, in short and long texts."""


def _ranked_by(store: Store, queries: tuple[str, ...]) -> dict[str, list[str]]:
    """The order `store` gives the elements of `RANKED` (in two documents) for each query."""
    for doc in ("a", "b"):
        elements = tuple(
            Element(f"p0-{doc}{i}", Category.TEXT, "", {"text": t}) for i, t in enumerate(RANKED)
        )
        store.put_pages(f"key-{doc}", [Page(0, "", elements)])
    store.serve([("key-a", "a", "docx"), ("key-b", "b", "pdf")], ())
    orders = {}
    for query in queries:
        found = store.search(
            textquery.TextQuery.parse(query),
            textquery.Scope(doc_ref="a"),
            100,
            textquery.Position(),
        )
        assert found is not None
        orders[query] = [RANKED[int(h.element_id.removeprefix("p0-a"))] for h in found.hits]
    return orders


def _once(text: str, query: str) -> bool:
    """Whether `text` holds each word of `query` (a prefix's words together) once."""
    words = text.split()
    terms = query.replace('"', "").split()
    return all(
        sum(w.startswith(t[:-1]) if t.endswith("*") else w == t for w in words) == 1 for t in terms
    )


def test_sqlite_and_postgresql_rank_alike_but_where_search_md_says(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """The same elements in each store, searched: the same results; among the elements that
    hold each word of the query once, the same order (the shortest first); the elements holding
    a word more than once are placed otherwise, as docs/search.md says (BM25 counts a second
    occurrence nearly as much as a first, length-normalised `ts_rank` little)."""
    queries = ("revenue", "alpha", "zeta", "gamma", "beta zeta", "revenue alpha", "alp*")
    queries += ('"alpha beta"', '"revenue alpha"')
    orders = {}
    for kind in ("sqlite", "postgresql"):
        store = store_of_kind(request, kind, tmp_path)
        try:
            orders[kind] = _ranked_by(store, queries)
        finally:
            store.close()
    sqlite, postgresql = orders["sqlite"], orders["postgresql"]
    for query in queries:
        assert sorted(sqlite[query]) == sorted(postgresql[query]), query
        once = [t for t in sqlite[query] if _once(t, query)]
        assert once == [t for t in postgresql[query] if _once(t, query)], query
        assert once == sorted(once, key=lambda t: len(t.split())), query
    # Where they differ: the shortest text holding the word twice is first with SQLite, the
    # shortest holding it (once) with PostgreSQL.
    assert sqlite["revenue"][:2] == ["revenue revenue", "revenue"]
    assert postgresql["revenue"][:2] == ["revenue", "revenue revenue"]
