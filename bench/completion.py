"""doc_ref completion at scale: p50/p95 of `DocRefs.complete` over synthetic catalogs.

```
.venv/bin/python bench/completion.py              # 1,000 / 10,000 / 100,000 documents
.venv/bin/python bench/completion.py 100000       # one size
```

The catalog entries are built directly (doc_refs of generated relative paths and titles of
random words): what is measured is the completion index, not the folder. Each size times the
index build (once per listing change) and every typed value in `TYPED` (prefixes of a few
doc_refs of every length, words and fuzzy fragments, and misses), 5 rounds; prints medians,
and the memory the index holds (traced by tracemalloc in one more build, not timed).
"""

from __future__ import annotations

import random
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dpe_server.catalog.folder import doc_ref_for
from dpe_server.read.completion import DocRefs

WORDS = [
    "budget",
    "quarterly",
    "report",
    "revenue",
    "plan",
    "deck",
    "review",
    "north",
    "south",
    "east",
    "west",
    "forecast",
    "minutes",
    "invoice",
    "contract",
    "summary",
    "draft",
    "final",
    "board",
    "team",
    "project",
    "roadmap",
    "audit",
    "sales",
    "hr",
    "policy",
]
ROUNDS = 5


def synthetic(n: int, seed: int = 1) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    pairs = []
    for i in range(n):
        name = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 5)))
        kind = ("xlsx", "pdf", "pptx", "docx")[i % 4]
        rel = f"team{i % 40}/{2015 + i % 10}/{name.replace(' ', '-')}-{i}.{kind}"
        pairs.append((doc_ref_for(rel), name.title()))
    return pairs


def typed_values(pairs: list[tuple[str, str]]) -> list[str]:
    rng = random.Random(2)
    refs = [ref for ref, _ in rng.sample(pairs, 5)]
    typed = ["", "zzzz", "qqq-xx"]
    typed += [ref[:k] for ref in refs for k in (1, 2, 4, 8, len(ref))]
    typed += ["bdg", "rvn", "qtr rpt", "fcst", "board", "audit-s", "plnrd", "a", "e", "re"]
    return typed


def measure(n: int) -> dict[str, float]:
    pairs = synthetic(n)
    builds, times = [], []
    for _ in range(ROUNDS):
        t0 = time.perf_counter()
        index = DocRefs(pairs)
        builds.append(time.perf_counter() - t0)
        for typed in typed_values(pairs):
            t0 = time.perf_counter()
            index.complete(typed)
            times.append(time.perf_counter() - t0)
    times.sort()
    tracemalloc.start()
    index = DocRefs(pairs)
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return {
        "docs": n,
        "build_ms": statistics.median(builds) * 1000,
        "p50_ms": times[len(times) // 2] * 1000,
        "p95_ms": times[int(len(times) * 0.95)] * 1000,
        "max_ms": times[-1] * 1000,
        "index_mb": held / 1e6,
        "n": len(times),
    }


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [1_000, 10_000, 100_000]
    rows = [measure(n) for n in sizes]
    print(
        "| documents | index build (median) | index memory "
        "| complete p50 | complete p95 | max | n |"
    )
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['docs']:,} | {r['build_ms']:.0f} ms | {r['index_mb']:.1f} MB "
            f"| {r['p50_ms']:.2f} ms "
            f"| {r['p95_ms']:.2f} ms | {r['max_ms']:.2f} ms | {r['n']:.0f} |"
        )
    if len(rows) > 1:
        first, last = rows[0], rows[-1]
        ratio = last["p95_ms"] / first["p95_ms"]
        print(f"p95 ratio {last['docs']:,} / {first['docs']:,}: {ratio:.1f}")


if __name__ == "__main__":
    main()
