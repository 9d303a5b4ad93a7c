"""The search index alone at 1,000 to 100,000 documents' worth of elements (issue 21).

    .venv/bin/python bench/search_index.py [--sizes 1000,10000,100000] [--calls 15]

For each size N, an index (`catalog/fulltext.py`'s tables, in `bench/out/search-index-N.sqlite3`,
built once) is filled directly through `fulltext.put_pages` with N documents of 10 elements
each, as `many.folder`'s documents have on average: a quarter of the documents start with a
table of 5-30 rows of four words, every other element is a sentence of 6-16 words of the
generated vocabulary (`gen.WORDS`, so "revenue" is in about a quarter of the elements). Every
document is served (`fulltext.serve`, a quarter of each file type). No server, no extraction:
this measures the index's own cost at a size whose extraction does not fit in a bench run.

Per query kind of `search_scale.QUERIES`, `--calls` calls of `textquery.search` (the first page
of 20) after one untimed call: p50 and p95 of wall time and the median CPU time (the process's,
less sensitive to other work on the machine); and, as the baseline measured the same way, FTS5
ranking every match (`ORDER BY bm25(element_text) LIMIT 20` over the served matches in scope,
what the index did before windows).
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import gen  # noqa: E402  (bench/, the folder of this script, is on sys.path)
from search_scale import QUERIES  # noqa: E402

from dpe_server.catalog import fulltext, textquery  # noqa: E402
from dpe_server.model.tree import Category, Element, Page  # noqa: E402

OUT = Path(__file__).resolve().parent / "out"
TYPES = ("xlsx", "pdf", "pptx", "docx")


def build(path: Path, documents: int) -> sqlite3.Connection:
    fresh = not path.exists()
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    db.executescript(fulltext.DDL)
    if fresh:
        rng = random.Random(21)
        with fulltext.transaction(db):
            for d in range(documents):
                elements = []
                for e in range(10):
                    if e == 0 and d % 4 == 0:
                        rows = [
                            [gen.words(rng, 1) for _ in range(4)] for _ in range(rng.randint(5, 30))
                        ]
                        elements.append(Element(f"p0-tbl{e}", Category.TABLE, "", {"rows": rows}))
                    else:
                        text = gen.sentence(rng, rng.randint(6, 16))
                        elements.append(Element(f"p0-txt{e}", Category.TEXT, "", {"text": text}))
                fulltext.put_pages(db, f"key-{d}", [Page(0, "", tuple(elements))])
    fulltext.serve(db, [(f"key-{d}", f"doc-{d}", TYPES[d % 4]) for d in range(documents)], ())
    return db


def timed(call: Callable[[], object], calls: int) -> tuple[float, float, float]:
    call()
    wall, cpu = [], []
    for _ in range(calls):
        c, w = time.process_time(), time.perf_counter()
        call()
        wall.append((time.perf_counter() - w) * 1000)
        cpu.append((time.process_time() - c) * 1000)
    wall.sort()
    return statistics.median(wall), wall[round(0.95 * (len(wall) - 1))], statistics.median(cpu)


def every_match_ranked(
    db: sqlite3.Connection, query: textquery.TextQuery, scope: textquery.Scope
) -> None:
    where, args = textquery._scope(db, scope)  # the same conditions
    db.execute(
        f"SELECT r.id, bm25(element_text) AS score {textquery._MATCHES}{where} "
        "ORDER BY score, element_text.rowid LIMIT 20",
        (query.fts(), 0, *args),
    ).fetchall()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--calls", type=int, default=15)
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    print(
        "| documents | query | matches | windows: p50 / p95 ms (CPU ms) "
        "| every match ranked: p50 / p95 ms (CPU ms) |"
    )
    print("|---|---|---|---|---|")
    for size in (int(s) for s in args.sizes.split(",")):
        db = build(OUT / f"search-index-{size}.sqlite3", size)
        for kind, given in QUERIES.items():
            query = textquery.TextQuery.parse(given["query"])
            categories = (given["category"],) if "category" in given else ()
            scope = textquery.Scope(categories=categories, file_type=given.get("file_type", ""))
            found = textquery.search(db, query, scope, 20, textquery.Position())
            ours = timed(
                lambda d=db, q=query, s=scope: textquery.search(d, q, s, 20, textquery.Position()),
                args.calls,
            )
            base = timed(lambda d=db, q=query, s=scope: every_match_ranked(d, q, s), args.calls)
            total = f"{found.total:,}{'+' if found.capped else ''}"
            print(
                f"| {size:,} | {kind} | {total} | {ours[0]:.1f} / {ours[1]:.1f} ({ours[2]:.1f}) "
                f"| {base[0]:.1f} / {base[1]:.1f} ({base[2]:.1f}) |",
                flush=True,
            )
        db.close()


if __name__ == "__main__":
    main()
