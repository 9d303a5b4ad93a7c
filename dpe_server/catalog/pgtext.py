"""The full-text index of a PostgreSQL store: `tsvector` and `tsquery`, the same words as SQLite.

The SQLite index (`fulltext`) cuts text with FTS5's `unicode61` tokenizer (case and Latin
diacritics folded, letters, digits and combining marks kept, everything else a separator)
after cutting Chinese, Japanese and Korean runs into bigrams (`fulltext.segment`). PostgreSQL's
own parser cuts differently (`e-mail` is three words to it, `½` none, a locale decides what a
letter is), so the server cuts the words itself, as `unicode61` does, and hands PostgreSQL the
result: a `tsvector` literal (each word with its positions, as the `simple` configuration
would keep it: no stemming, no stop words) and a `tsquery` literal (`&` between terms, `<->`
within a phrase, `:*` for a prefix). PostgreSQL's parser never sees the text, so both stores
index, and find, the same words; the query language is `fulltext.TextQuery`'s.

Checked against `unicode61` on every text of the fixtures' expected trees: the same words in
the same order. They differ on characters no document holds in practice (code points that
Unicode 6.1, `unicode61`'s table, left unassigned; a few Latin letters that have an accent but
no separate base form, such as `ǽ`).

Limits that are PostgreSQL's: positions stop at 16,383 (a phrase past an element's 16,383rd
word is not found; its words are), a word keeps 256 positions, a word longer than 2,046 bytes
is left out, and an element's vector is cut at `VECTOR_BYTES`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import psycopg

from dpe_server.catalog import textquery
from dpe_server.catalog.fulltext import element_rows
from dpe_server.catalog.ranking import tokens
from dpe_server.catalog.textquery import Found, Position, Scope, TextQuery, index_words
from dpe_server.model.tree import Page

MAX_WORD_BYTES = 2046
"""PostgreSQL refuses a longer lexeme."""
VECTOR_BYTES = 512 * 1024
"""An element's words past this much literal are not indexed (a tsvector is under 1 MB)."""


def _quoted(word: str) -> str:
    return "'" + word.replace("\\", "\\\\").replace("'", "''") + "'"


def vector(text: str) -> str:
    """The `tsvector` literal of an element's `text`."""
    positions: dict[str, list[int]] = {}
    size = 0
    for at, word in enumerate(index_words(text), start=1):
        if len(word.encode()) > MAX_WORD_BYTES:
            continue
        if word not in positions:
            size += len(word.encode()) + 8
            positions[word] = []
        size += 6
        if size > VECTOR_BYTES:
            break
        if len(positions[word]) < 256:
            positions[word].append(min(at, 16383))
    return " ".join(
        f"{_quoted(w)}:{','.join(map(str, dict.fromkeys(p)))}" for w, p in positions.items()
    )


def query(parsed: TextQuery) -> str | None:
    """The `tsquery` literal of `parsed`: every term required, a phrase's words adjacent, a
    prefix (`gam*`, or a term ending in one CJK character) matching the words it begins; None
    when a term has no word the index can hold (nothing matches)."""
    terms = []
    for text, prefix in parsed.segments():
        found = [_quoted(w) for w in tokens(text) if len(w.encode()) <= MAX_WORD_BYTES]
        if not found:
            return None
        if prefix:
            found[-1] += ":*"
        terms.append("(" + " <-> ".join(found) + ")")
    return " & ".join(terms)


# ---- the index's tables (created by `pgschema.MIGRATIONS`, `live` on each connection) ------

LIVE_DDL = """
CREATE TEMP TABLE IF NOT EXISTS live (
    key TEXT PRIMARY KEY,
    doc_ref TEXT NOT NULL,
    file_type TEXT NOT NULL
)
"""
"""The versions this replica serves, per connection (as `fulltext`'s `live`): every replica
searches the shared rows through what it serves itself."""
ANALYZE_CHANGES = 100
"""A change of `live` this large has it analysed again (autovacuum never analyses a temporary
table; without statistics the planner guesses its size)."""


def put_pages(db: psycopg.Connection[Any], key: str, pages: Sequence[Page]) -> None:
    """Index the elements of `pages` of `key` (inside the caller's transaction)."""
    with db.cursor() as cur:
        for page in pages:
            cur.execute(
                "DELETE FROM elements WHERE key = %s AND page_index = %s", (key, page.page_index)
            )
            cur.executemany(
                "INSERT INTO elements (key, page_index, element_id, category, text, words) "
                "VALUES (%s, %s, %s, %s, %s, %s::tsvector)",
                [
                    (key, page.page_index, eid, category, text, vector(text))
                    for eid, category, text in element_rows(page)
                ],
            )


def fill_live(db: psycopg.Connection[Any], rows: Iterable[tuple[str, str, str]]) -> None:
    """A new connection's `live` table, holding `rows`."""
    db.execute(LIVE_DDL)
    with db.cursor() as cur, cur.copy("COPY live FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)
    db.execute("ANALYZE live")


def serve(
    db: psycopg.Connection[Any], added: Sequence[tuple[str, str, str]], dropped: Sequence[str]
) -> None:
    """Searches return elements of the keys `added` (key, doc_ref, file type), no longer of
    the keys `dropped` (inside the caller's transaction)."""
    with db.cursor() as cur:
        cur.execute("DELETE FROM live WHERE key = ANY(%s)", (list(dropped),))
        cur.executemany(
            "INSERT INTO live VALUES (%s, %s, %s) ON CONFLICT (key) DO UPDATE "
            "SET doc_ref = EXCLUDED.doc_ref, file_type = EXCLUDED.file_type",
            list(added),
        )
    if len(added) + len(dropped) >= ANALYZE_CHANGES:
        db.execute("ANALYZE live")  # the planner's idea of its size (no autovacuum on it)


def search(
    db: psycopg.Connection[Any], parsed: TextQuery, scope: Scope, limit: int, at: Position
) -> Found:
    """The served elements matching `parsed` in `scope`: `limit` of them from `at` (an offset:
    `at.skip`), best first (`ts_rank`, length-normalised), and how many there are (counted as
    `textquery.search` counts them). Every match is ranked: PostgreSQL's GIN index gives no
    cheaper order to cut into windows."""
    offset = at.skip
    literal = query(parsed)
    if literal is None:
        return Found(0, False, [], None)
    filters, args = "", list[object]([literal])
    for column, value in (("l.file_type", scope.file_type), ("l.doc_ref", scope.doc_ref)):
        if value:
            filters += f" AND {column} = %s"
            args.append(value)
    if scope.categories:
        filters += " AND e.category = ANY(%s)"
        args.append(list(scope.categories))
    cap = max(textquery.WINDOW, offset + limit)
    matches = (
        "FROM (SELECT %s::tsquery AS q) x JOIN elements e ON e.words @@ x.q "
        f"JOIN live l ON l.key = e.key WHERE true{filters}"
    )
    row = db.execute(f"SELECT count(*) FROM (SELECT 1 {matches} LIMIT {cap + 1}) m", args)
    (counted,) = row.fetchone() or (0,)
    rows = db.execute(
        "SELECT e.key, l.doc_ref, e.page_index, e.element_id, e.category, e.text "
        f"{matches} ORDER BY ts_rank(e.words, x.q, 1) DESC, e.id LIMIT %s OFFSET %s",
        [*args, limit, offset],
    ).fetchall()
    return textquery.found(parsed, rows, counted, offset)
