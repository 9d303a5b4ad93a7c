"""BM25 of a window of matches (`textquery.search`), by FTS5 or, for common words, computed here.

FTS5's own `bm25()` first counts, for each phrase of the query, every row of the index that
holds it (its inverse document frequency): a walk of the whole list of rows of a common word,
26 ms for a word in 240,000 elements, whatever the page asked for. So:

- when every phrase is held by at most `COUNTED` rows (a query of one phrase: when its rarest
  word is), the window is ranked by `bm25()`;
- otherwise by the same formula (k1 = 1.2, b = 0.75; FTS5's `fts5_aux.c`) computed here for
  the window's rows only: the number of rows and their average length are FTS5's own totals
  (its "averages" record); a phrase's rows are counted up to `COUNTED` and, past that,
  estimated from how far into the index its `COUNTED`-th row lies (`COUNTED` x rows / rows
  up to there) -- a one-phrase query's order does not depend on it (a common factor of every
  score); a row's length and each phrase's occurrences in it come from its text, split as
  `unicode61` (`remove_diacritics 2`) splits it after the same CJK segmentation (`tokens`).
"""

from __future__ import annotations

import functools
import math
import re
import sqlite3
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

K1, B = 1.2, 0.75
COUNTED = 10_000
"""A phrase's rows are counted up to this many; past it their number is estimated."""
_TOKEN = re.compile(r"[^\W_]+")
"""A token: letters and digits (combining marks, even inside a word, separate, as in
`unicode61`: Devanagari's vowel signs cut its words)."""
_ASCII_TOKEN = re.compile(r"[a-z0-9]+")
"""`_TOKEN` in lower-case ASCII text."""


@functools.cache
def _folding() -> dict[int, str | None]:
    """Latin letters with accents to their base letter, combining accents removed, and the
    few case foldings `unicode61` makes that `str.lower` does not. Built on first use (a
    few ms of `unicodedata`): a `dpe-server read` that searches nothing never needs it."""
    fold: dict[int, str | None] = dict.fromkeys(range(0x300, 0x370))
    for c in (*range(0xC0, 0x250), *range(0x1E00, 0x1F00)):
        base, accents = (d := unicodedata.normalize("NFD", chr(c)))[0], d[1:]
        if accents and base.isascii() and all(0x300 <= ord(a) < 0x370 for a in accents):
            fold[c] = base
    return fold | {ord("ς"): "σ", ord("µ"): "μ", ord("ϕ"): "φ"}


def tokens(text: str) -> list[str]:
    """`text` (already CJK-segmented) as `unicode61 remove_diacritics 2` cuts and folds it:
    the index's words, for ranking here and for a PostgreSQL store's `tsvector`."""
    low = text.lower()
    if low.isascii():  # the same words, found faster (nothing to fold)
        return _ASCII_TOKEN.findall(low)
    return _TOKEN.findall(low.translate(_folding()))


@dataclass(frozen=True, slots=True)
class Phrase:
    fts: str
    """The phrase alone in FTS5 syntax (as the query gives it)."""
    tokens: tuple[str, ...]
    prefix: bool
    """The last token matches any token it begins."""

    def count(self, row: list[str]) -> int:
        """How many times the phrase occurs in a row's tokens (overlapping, as FTS5 counts)."""
        first, n = self.tokens[0], len(self.tokens)
        if n == 1:
            return sum(t.startswith(first) for t in row) if self.prefix else row.count(first)
        found, at, last = 0, -1, self.tokens[-1]
        middle = list(self.tokens[1:-1])
        while True:
            try:
                at = row.index(first, at + 1)
            except ValueError:
                return found
            end = row[at + n - 1] if at + n <= len(row) else None
            if end is None or row[at + 1 : at + n - 1] != middle:
                continue
            found += end.startswith(last) if self.prefix else end == last


@dataclass(frozen=True, slots=True)
class Ranking:
    """How the matches of one query are ranked: by FTS5's `bm25()` when every phrase is held by
    at most `COUNTED` rows (its own counting is cheap then), else by `score`."""

    phrases: tuple[Phrase, ...]
    idf: tuple[float, ...]
    average: float
    """Tokens per row, over the whole index."""
    native: bool
    split: Callable[[str], list[str]]
    """A row's text as the index's tokens."""

    @classmethod
    def of(
        cls, db: sqlite3.Connection, phrases: Sequence[Phrase], split: Callable[[str], list[str]]
    ) -> Ranking:
        rows, total = _averages(db)
        # One phrase: its weight is a common factor of every score, the order does not need it
        # (nor its number of rows past `COUNTED`, whose estimate walks the index again).
        several = len(phrases) > 1
        if several:
            hits = [_hits(db, phrase.fts, rows) for phrase in phrases]
        else:  # `native` only needs to know whether it is held by at most `COUNTED` rows
            hits = [_most(db, phrase, rows) for phrase in phrases]
        idf = tuple(_idf(rows, h) for h in hits) if several else (1.0,) * len(hits)
        average = total / rows if rows else 1.0
        return cls(tuple(phrases), idf, average, max(hits, default=0) <= COUNTED, split)

    def order(
        self, db: sqlite3.Connection, match: str, window: list[tuple[Any, ...]]
    ) -> list[tuple[Any, ...]]:
        """The rows of a window (rowid first, text last), best first, ties by rowid."""
        if not window:
            return []
        if self.native:
            scores = dict(
                db.execute(
                    "SELECT rowid, bm25(element_text) FROM element_text "
                    "WHERE element_text MATCH ? AND rowid BETWEEN ? AND ?",
                    (match, window[0][0], window[-1][0]),
                )
            )
            return sorted(window, key=lambda row: (scores[row[0]], row[0]))
        return sorted(window, key=lambda row: (-self.score(self.split(row[-1])), row[0]))

    def score(self, row: list[str]) -> float:
        """BM25 of a row given as its tokens (higher is better)."""
        norm = K1 * (1 - B + B * len(row) / self.average)
        total = 0.0
        for phrase, idf in zip(self.phrases, self.idf, strict=True):
            freq = phrase.count(row)
            total += idf * freq * (K1 + 1) / (freq + norm)
        return total


def _idf(rows: int, hits: float) -> float:
    value = math.log((rows - hits + 0.5) / (hits + 0.5))
    return value if value > 0 else 1e-6  # as FTS5 does for very common words


def _averages(db: sqlite3.Connection) -> tuple[int, int]:
    """FTS5's number of rows and of tokens in them (its record of averages, id 1)."""
    found = db.execute("SELECT block FROM element_text_data WHERE id = 1").fetchone()
    if found is None or not found[0]:
        return 0, 0
    block: bytes = found[0]
    rows, at = _varint(block, 0)
    total, _ = _varint(block, at) if at < len(block) else (0, at)
    return rows, total


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """An SQLite varint at `at`: its value and where the next begins."""
    value = 0
    for _ in range(8):
        byte = data[at]
        at += 1
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, at
    return (value << 8) | data[at], at + 1


def _most(db: sqlite3.Connection, phrase: Phrase, rows: int) -> float:
    """At most how many rows hold `phrase`: those of its rarest word, counted up to `COUNTED`
    (past it, `COUNTED` + 1). Counting a phrase of common words checks where each stands in
    thousands of rows (30 ms at 100,000 documents); a word's rows are just counted."""
    if len(phrase.tokens) == 1:
        return _hits(db, phrase.fts, rows, estimate=False)
    words = [f'"{t}"' for t in phrase.tokens[:-1]]
    words.append(f'"{phrase.tokens[-1]}"' + (" *" if phrase.prefix else ""))
    return min(_hits(db, word, rows, estimate=False) for word in words)


def _hits(db: sqlite3.Connection, fts: str, rows: int, *, estimate: bool = True) -> float:
    """The rows holding a phrase: counted up to `COUNTED`, else estimated (`estimate`), or
    `COUNTED` + 1 (more than `COUNTED`)."""
    (hits,) = db.execute(
        "SELECT count(*) FROM (SELECT 1 FROM element_text WHERE element_text MATCH ? "
        f"LIMIT {COUNTED + 1})",
        (fts,),
    ).fetchone()
    if hits <= COUNTED or not estimate:
        return float(hits)
    (last,) = db.execute(
        "SELECT rowid FROM element_text WHERE element_text MATCH ? ORDER BY rowid "
        f"LIMIT 1 OFFSET {COUNTED - 1}",
        (fts,),
    ).fetchone()
    before: int
    (before,) = db.execute(
        "SELECT count(*) FROM element_text_docsize WHERE id <= ?", (last,)
    ).fetchone()
    return min(float(rows), COUNTED * rows / max(before, 1))
