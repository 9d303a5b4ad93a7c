"""Which FTS5 tokenizer for the search index (issue 21): `trigram` against `unicode61` with
Chinese, Japanese and Korean runs cut into overlapping bigrams before indexing (and queries cut
the same way), on the same generated element texts.

    .venv/bin/python bench/fts_tokenizers.py [--elements 100000] [--runs 7]

Prints per tokenizer: index build time and size, and the median and p95 of a query of a
common Latin word, a rare one, a 4-character Chinese word and a 2-character one (trigram
answers the last with `LIKE`, a scan, as `catalog/fulltext.py` does). Writes under bench/out/.
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gen  # bench/, the folder of this script, is on sys.path

from dpe_server.catalog.fulltext import segment

OUT = Path(__file__).resolve().parent / "out"
HANZI = "年度预算报告销售收入市场客户产品风险计划增长目标区域季度成本利润管理团队项目合同"


def texts(n: int) -> list[str]:
    rng = random.Random(21)
    out = []
    for i in range(n):
        words = gen.words(rng, rng.randint(4, 30))
        if i % 4 == 0:
            words += " " + "".join(rng.choice(HANZI) for _ in range(rng.randint(4, 20)))
            words += "预算报告" if i % 100 == 0 else ""
        if i % 1000 == 0:
            words += " zanzibar"
        out.append(words)
    return out


def build(path: Path, tokenizer: str, prepare: Callable[[str], str], rows: list[str]) -> float:
    path.unlink(missing_ok=True)
    db = sqlite3.connect(path)
    db.execute(f"CREATE VIRTUAL TABLE t USING fts5(text, tokenize='{tokenizer}')")
    start = time.perf_counter()
    with db:
        db.executemany("INSERT INTO t (text) VALUES (?)", [(prepare(r),) for r in rows])
    took = time.perf_counter() - start
    db.close()
    return took


def timed(db: sqlite3.Connection, where: str, arg: str, runs: int) -> tuple[float, float, int]:
    """A search as `textquery.search` makes it: the count, then the first 20, best first."""
    order = "rank" if "MATCH" in where else "rowid"
    times, found = [], 0
    for _ in range(runs):
        start = time.perf_counter()
        (found,) = db.execute(f"SELECT count(*) FROM t WHERE {where}", (arg,)).fetchone()
        db.execute(
            f"SELECT rowid FROM t WHERE {where} ORDER BY {order} LIMIT 20", (arg,)
        ).fetchall()
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return statistics.median(times), times[int(0.95 * (len(times) - 1))], found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--elements", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    rows = texts(args.elements)
    match, like = "t MATCH ?", "+text LIKE ?"
    print(f"{args.elements:,} elements, {args.runs} runs, SQLite {sqlite3.sqlite_version}")
    print("| tokenizer | build s | MB | query | median ms | p95 ms | rows |")
    print("|---|---|---|---|---|---|---|")
    for name, tokenizer, prepare in (
        ("trigram", "trigram", str),
        ("unicode61+bigram", "unicode61 remove_diacritics 2", segment),
    ):
        path = OUT / f"fts-{name}.sqlite3"
        took = build(path, tokenizer, prepare, rows)
        size = path.stat().st_size / 1e6
        db = sqlite3.connect(path)
        queries = [
            ("common word", match, '"revenue"'),
            ("rare word", match, '"zanzibar"'),
            (
                "4-char Chinese",
                match,
                '"' + (segment("预算报告", True) if name != "trigram" else "预算报告") + '"',
            ),
        ]
        if name == "trigram":
            queries.append(("2-char Chinese (LIKE)", like, "%预算%"))
        else:
            queries.append(("2-char Chinese", match, '"预算"'))
        for label, sql, arg in queries:
            med, p95, n = timed(db, sql, arg, args.runs)
            print(f"| {name} | {took:.1f} | {size:.0f} | {label} | {med:.2f} | {p95:.2f} | {n} |")
        db.close()
        path.unlink()


if __name__ == "__main__":
    main()
