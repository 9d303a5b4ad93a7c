"""The full-text index of every element's text, in the cache database (SQLite FTS5).

- What: one row per element of every stored page (`element_rows`: store key, page index,
  element id, category), its text (`model.words.element_text`: the words the Markdown-recall
  rule counts, of the whole element) in the FTS5 table `element_text` under the same rowid.
  Rows are written with the page (`put_pages`) and deleted with the key (`forget`).
- Tokenizer: `trigram` (SQLite 3.34 or later). A term matches wherever its characters occur,
  so Chinese, Japanese and Korean text, which has no spaces between words, is found without a
  dictionary, as are parts of compound words and codes. A term of fewer than three characters
  has no trigram: it is matched by `LIKE` over the rows the other terms matched (or every row,
  when it has no longer term beside it), unranked.
- Which versions: rows are content-addressed (by store key), so an old version's rows may
  linger; a search joins the per-connection table `live` (the keys this server serves now,
  with their doc_ref and file type, `serve`), so it never returns an element of a deleted file
  or of a version no longer served, and it filters by file type and document there.
- Queries (`TextQuery.parse`): words, "phrases in quotes", `prefix*`; every term must occur.
  Each term goes to FTS5 as a quoted string, so no user input is FTS5 syntax: a stray quote
  or `AND(` is searched for literally.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from dpe_server.model.tree import Page
from dpe_server.model.words import element_text, normalise

DDL = """
CREATE TABLE IF NOT EXISTS element_rows (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL,
    page_index INTEGER NOT NULL,
    element_id TEXT NOT NULL,
    category TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS element_rows_page ON element_rows (key, page_index);
CREATE VIRTUAL TABLE IF NOT EXISTS element_text USING fts5(text, tokenize='trigram');
CREATE TEMP TABLE IF NOT EXISTS live (
    key TEXT PRIMARY KEY,
    doc_ref TEXT NOT NULL,
    file_type TEXT NOT NULL
);
"""
SNIPPET_CHARS = 64
"""About how many characters of an element's text a snippet shows around the match."""
MARK = "**"
"""What a snippet puts either side of a match."""
_TERM = re.compile(r'"([^"]*)"?|(\S+)')


@dataclass(frozen=True, slots=True)
class TextQuery:
    """The terms of a query (lower-case, whitespace collapsed), every one of which must occur."""

    terms: tuple[str, ...]

    @classmethod
    def parse(cls, text: str) -> TextQuery:
        """Words, "phrases" (an unclosed quote runs to the end) and `prefix*` (a term matches
        anywhere, so a prefix needs nothing more); anything else is a literal character."""
        terms: list[str] = []
        for phrase, word in _TERM.findall(text):
            term = normalise(phrase) if phrase else word.rstrip("*")
            if term:
                terms.append(term.lower())
        return cls(tuple(dict.fromkeys(terms)))

    @property
    def ranked(self) -> tuple[str, ...]:
        """The terms the index finds (three characters or more)."""
        return tuple(t for t in self.terms if len(t) >= 3)

    @property
    def scanned(self) -> tuple[str, ...]:
        """The terms matched by `LIKE` (shorter than a trigram)."""
        return tuple(t for t in self.terms if len(t) < 3)


@dataclass(frozen=True, slots=True)
class Scope:
    """Which served elements a search looks at (empty: all)."""

    categories: tuple[str, ...] = ()
    file_type: str = ""
    doc_ref: str = ""


@dataclass(frozen=True, slots=True)
class Hit:
    key: str
    doc_ref: str
    page_index: int
    element_id: str
    category: str
    snippet: str


def connect_memory() -> sqlite3.Connection:
    """An index in this process's memory (a server without a cache)."""
    db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    db.executescript(DDL)
    return db


@contextmanager
def transaction(db: sqlite3.Connection) -> Iterator[None]:
    """One transaction on a connection in autocommit mode (`isolation_level=None`)."""
    db.execute("BEGIN")
    try:
        yield
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def put_pages(db: sqlite3.Connection, key: str, pages: Sequence[Page]) -> None:
    """Index the elements of `pages` of `key` (inside the caller's transaction)."""
    for page in pages:
        _delete(db, "key=? AND page_index=?", (key, page.page_index))
        for el in page.elements:
            cursor = db.execute(
                "INSERT INTO element_rows (key, page_index, element_id, category) "
                "VALUES (?, ?, ?, ?)",
                (key, page.page_index, el.element_id, el.category.value),
            )
            db.execute(
                "INSERT INTO element_text (rowid, text) VALUES (?, ?)",
                (cursor.lastrowid, element_text(el.category.value, el.content)),
            )


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
    db.executemany("INSERT OR REPLACE INTO live VALUES (?, ?, ?)", list(added))


def search(
    db: sqlite3.Connection, query: TextQuery, scope: Scope, limit: int, offset: int
) -> tuple[int, list[Hit]]:
    """How many served elements match, and `limit` of them from `offset`, best first."""
    where, args = _where(query, scope)
    joins = (
        "FROM element_text JOIN element_rows r ON r.id = element_text.rowid "
        "JOIN live ON live.key = r.key"
    )
    (total,) = db.execute(f"SELECT count(*) {joins} WHERE {where}", args).fetchone()
    if query.ranked:
        shown = f"snippet(element_text, 0, '{MARK}', '{MARK}', '…', {SNIPPET_CHARS})"
        order = "bm25(element_text), element_text.rowid"
    else:
        shown, order = "element_text.text", "element_text.rowid"
    rows = db.execute(
        f"SELECT r.key, live.doc_ref, r.page_index, r.element_id, r.category, {shown} "
        f"{joins} WHERE {where} ORDER BY {order} LIMIT ? OFFSET ?",
        (*args, limit, offset),
    ).fetchall()
    return total, [
        Hit(key, ref, page, eid, cat, _snippet(text, query))
        for key, ref, page, eid, cat, text in rows
    ]


def _where(query: TextQuery, scope: Scope) -> tuple[str, list[object]]:
    clauses: list[str] = []
    args: list[object] = []
    if query.ranked:
        clauses.append("element_text MATCH ?")
        args.append(" AND ".join('"' + t.replace('"', '""') + '"' for t in query.ranked))
    for term in query.scanned:
        # `+` keeps the pattern from the trigram index, which (SQLite 3.40) finds no
        # non-ASCII pattern shorter than three characters.
        clauses.append("+element_text.text LIKE ? ESCAPE '\\'")
        args.append("%" + re.sub(r"([\\%_])", r"\\\1", term) + "%")
    if scope.categories:
        clauses.append(f"r.category IN ({','.join('?' * len(scope.categories))})")
        args += scope.categories
    if scope.file_type:
        clauses.append("live.file_type = ?")
        args.append(scope.file_type)
    if scope.doc_ref:
        clauses.append("live.doc_ref = ?")
        args.append(scope.doc_ref)
    return " AND ".join(clauses), args


def _snippet(shown: str, query: TextQuery) -> str:
    """`shown` on one line: FTS5's snippet for a ranked query, else the text around the first
    term, marked the same way."""
    if not query.ranked:
        term, half = query.scanned[0], SNIPPET_CHARS // 2
        at = max(shown.lower().find(term), 0)
        start, end = max(at - half, 0), at + len(term)
        cut = shown[start:at] + MARK + shown[at:end] + MARK + shown[end : end + half]
        shown = ("…" if start else "") + cut + ("…" if end + half < len(shown) else "")
    return " ".join(shown.split())
