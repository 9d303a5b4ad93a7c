"""The full-text index of every element's text, in the cache database (SQLite FTS5).

- What: one row per element of every stored page (`element_rows`: store key, page index,
  element id, category and its text, `model.words.element_text`: the words the Markdown-recall
  rule counts, of the whole element), and the same text, segmented, in the FTS5 table
  `element_text` under the same rowid. Rows are written with the page (`put_pages`) and
  deleted with the key (`forget`); `dpe-server read` stores a document without them, which
  a server builds later (`Store.index_stored`: docs/search.md).
- Tokenizer: `unicode61` (case and diacritics folded) over text whose Chinese, Japanese and
  Korean runs are cut into overlapping bigrams, each run followed by its last character
  (`segment`: 年度预算 is indexed as 年度 度预 预算 算). Every word of two characters or more
  is then one token, so a 2-character Chinese word (the commonest length) is an index lookup,
  a longer one a phrase of bigrams, one character a prefix (预*). The `trigram` tokenizer was
  measured against it (`bench/fts_tokenizers.py`): twice the size, and a query shorter than three
  characters cannot use it (a `LIKE` scan of every row, 2,000 times slower at 100,000
  elements); it also matches inside words (`bet` in alphabet), which word search does not.
- Which versions: rows are content-addressed (by store key), so an old version's rows may
  linger; a search joins the per-connection table `live` (the keys this server serves now,
  with their doc_ref and file type, `serve`), so it never returns an element of a deleted file
  or of a version no longer served, and it filters by file type and document there.
- Queries, their results and snippets: `textquery` (which `dpe-server read` never imports).
"""

from __future__ import annotations

import functools
import re
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

from dpe_server.model.tree import Page
from dpe_server.model.words import element_text

DDL = """
CREATE TABLE IF NOT EXISTS element_rows (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL,
    page_index INTEGER NOT NULL,
    element_id TEXT NOT NULL,
    category TEXT NOT NULL,
    text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS element_rows_page ON element_rows (key, page_index);
CREATE VIRTUAL TABLE IF NOT EXISTS element_text
    USING fts5(text, tokenize='unicode61 remove_diacritics 2');
"""
LIVE_DDL = """
CREATE TEMP TABLE IF NOT EXISTS live (
    key TEXT PRIMARY KEY,
    doc_ref TEXT NOT NULL,
    file_type TEXT NOT NULL
) WITHOUT ROWID;
"""
"""The keys served, per connection (not part of the file: a cache's format is `DDL`). Without
a rowid, a row is one entry of one B-tree (the key's), and `serve` writes them in key order:
telling the index of 100,000 versions served took half the CPU it did."""
CJK_CHAR = r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]"
"""Kana, CJK ideographs and Hangul: scripts written without spaces between words."""
CJK_FIRST = "\u3040"
"""The lowest character of `CJK_CHAR`: text below it holds no CJK run."""


@functools.cache
def _cjk() -> re.Pattern[str]:
    """A CJK run (compiled when first needed: the wide class takes ~10 ms to compile)."""
    return re.compile(CJK_CHAR + "+")


def segment(text: str, open_end: bool = False) -> str:
    """`text` with each CJK run cut into its overlapping bigrams and its last character.

    `open_end` (a query term): a run that ends the text may go on in the indexed text, so its
    last character is left out (a run of one character stays, to be matched as a prefix).
    """

    def cut(m: re.Match[str]) -> str:
        run = m.group(0)
        tokens = [run[i : i + 2] for i in range(len(run) - 1)]
        if not (open_end and m.end() == len(text) and tokens):
            tokens.append(run[-1])
        return " " + " ".join(tokens) + " "

    if not text or text.isascii() or max(text) < CJK_FIRST:  # isascii: a flag, not a pass
        return " ".join(text.split())
    return " ".join(_cjk().sub(cut, text).split())


def connect_memory() -> sqlite3.Connection:
    """An index in this process's memory (a server without a cache)."""
    db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    db.executescript(DDL + LIVE_DDL)
    return db


@contextmanager
def transaction(db: sqlite3.Connection, *, write: bool = False) -> Iterator[None]:
    """One transaction on a connection in autocommit mode (`isolation_level=None`). `write`:
    one that reads before it writes takes the write lock first (`BEGIN IMMEDIATE`), waiting
    for another connection's writes as every write does (the busy timeout); begun as a reader,
    it would fail at its first write the moment another connection had written meanwhile."""
    db.execute("BEGIN IMMEDIATE" if write else "BEGIN")
    try:
        yield
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def put_pages(db: sqlite3.Connection, key: str, pages: Sequence[Page]) -> None:
    """Index the elements of `pages` of `key` (inside the caller's transaction)."""
    for page in pages:
        put_rows(db, key, page.page_index, indexed_rows(page))


def indexed_rows(page: Page) -> list[tuple[str, str, str, str]]:
    """What `put_rows` writes of `page`: each element's id, category, text and its text as
    the FTS5 table holds it (`segment`). The costly half of indexing, which needs no
    database: built outside the store's lock where the store can (`Store.index_stored`)."""
    return [(*row, segment(row[2])) for row in element_rows(page)]


def put_rows(
    db: sqlite3.Connection, key: str, page_index: int, rows: Sequence[tuple[str, str, str, str]]
) -> None:
    """Index one page of `key` as `indexed_rows` built it, in place of its rows (inside the
    caller's transaction)."""
    where = (key, page_index)
    _delete(db, "key=? AND page_index=?", where)
    db.executemany(
        "INSERT INTO element_rows (key, page_index, element_id, category, text) "
        "VALUES (?, ?, ?, ?, ?)",
        [(*where, eid, category, text) for eid, category, text, _ in rows],
    )
    ids = db.execute(
        "SELECT id FROM element_rows WHERE key=? AND page_index=? ORDER BY id", where
    ).fetchall()
    db.executemany(
        "INSERT INTO element_text (rowid, text) VALUES (?, ?)",
        [(row_id, row[3]) for (row_id,), row in zip(ids, rows, strict=True)],
    )


def element_rows(page: Page) -> list[tuple[str, str, str]]:
    """What the index holds of each element of `page`: its id, category and text."""
    return [
        (el.element_id, el.category.value, element_text(el.category.value, el.content))
        for el in page.elements
    ]


def forget(db: sqlite3.Connection, key: str) -> None:
    _delete(db, "key=?", (key,))


def _delete(db: sqlite3.Connection, where: str, args: tuple[object, ...]) -> None:
    rows = f"SELECT id FROM element_rows WHERE {where}"
    db.execute(f"DELETE FROM element_text WHERE rowid IN ({rows})", args)
    db.execute(f"DELETE FROM element_rows WHERE {where}", args)


def serve(
    db: sqlite3.Connection, added: Iterable[tuple[str, str, str]], dropped: Iterable[str]
) -> None:
    """Searches return elements of the keys `added` (key, doc_ref, file type), no longer of
    the keys `dropped`."""
    db.executemany("DELETE FROM live WHERE key=?", [(k,) for k in dropped])
    db.executemany("INSERT OR REPLACE INTO live VALUES (?, ?, ?)", sorted(added))
