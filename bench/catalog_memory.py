"""What the serving process keeps per catalogued document (issue 21, the lean catalog).

```
.venv/bin/python bench/catalog_memory.py          # the 1,000-document folder of gen.folder
.venv/bin/python bench/catalog_memory.py 50       # 50 per format (200 documents)
.venv/bin/python bench/catalog_memory.py 250 10   # 10 copies of the 1,000 (10,000 documents)
```

Fills a persistent cache for the generated folder once (every document extracted in this
process, `bench/out/cache-memory-N/`), then in fresh processes (3 runs, medians) starts a
`Catalog` on the folder from that cache, as a warm restart does, and reports per document:
the Python heap it added (tracemalloc) and the resident memory it added (VmRSS after minus
before, with the modules imported and an empty catalog started first).
"""

from __future__ import annotations

import gc
import json
import shutil
import statistics
import subprocess
import sys
import tracemalloc
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import gen

from dpe_server.catalog.catalog import Catalog
from dpe_server.catalog.sqlite import open_store
from dpe_server.isolation.backends import ThreadBackend

OUT = Path(__file__).resolve().parent / "out"
RUNS = 3


def rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def fill(root: Path, cache: Path) -> None:
    catalog = Catalog(root, "bench", ThreadBackend(), store=open_store(cache, root))
    async with anyio.create_task_group() as tg:
        await catalog.start(tg)
        await catalog.warm()
        tg.cancel_scope.cancel()


async def restart(root: Path, cache: Path, traced: bool) -> dict[str, float]:
    """One measurement: a catalog started from the filled cache, against an empty one (the
    heap traced or not: tracing costs resident memory of its own)."""
    empty = root.parent / "empty"
    empty.mkdir(exist_ok=True)
    store = open_store(cache, root)
    if traced:
        tracemalloc.start()
    await Catalog(empty, "bench", ThreadBackend(), store=store).start()
    gc.collect()
    heap, rss = tracemalloc.get_traced_memory()[0], rss_kb()
    catalog = Catalog(root, "bench", ThreadBackend(), store=store)
    await catalog.start()
    gc.collect()
    n = len(catalog.entries())
    assert all(e.current for e in catalog.entries()), "the cache does not hold every document"
    return {
        "docs": n,
        "heap_b": (tracemalloc.get_traced_memory()[0] - heap) / n,
        "rss_b": (rss_kb() - rss) * 1024 / n,
    }


def copied(folder: Path, copies: int) -> Path:
    """`copies` copies of `folder`, side by side in one folder (built once)."""
    root = folder.parent / f"{folder.name}x{copies}"
    if not (root / ".complete").exists():
        shutil.rmtree(root, ignore_errors=True)
        for i in range(copies):
            shutil.copytree(folder, root / f"copy{i}", ignore=shutil.ignore_patterns(".*"))
        (root / ".complete").write_text("ok\n")
    return root


def _one(root: Path, cache: Path, mode: str) -> dict[str, float]:
    command = [sys.executable, __file__, "--one", str(root), str(cache), mode]
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    result: dict[str, float] = json.loads(done.stdout)
    return result


def main() -> None:
    if sys.argv[1:2] == ["--one"]:
        traced = sys.argv[4] == "heap"
        print(json.dumps(anyio.run(restart, Path(sys.argv[2]), Path(sys.argv[3]), traced)))
        return
    per_format = int(sys.argv[1]) if len(sys.argv) > 1 else 250
    copies = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    root = gen.folder(OUT, per_format)
    if copies > 1:
        root = copied(root, copies)
    cache = OUT / f"cache-memory-{per_format}x{copies}"
    if not (cache / ".filled").exists():
        anyio.run(fill, root, cache)
        (cache / ".filled").write_text("ok\n")
    runs = {mode: [_one(root, cache, mode) for _ in range(RUNS)] for mode in ("heap", "rss")}
    heap = statistics.median(r["heap_b"] for r in runs["heap"])
    rss = statistics.median(r["rss_b"] for r in runs["rss"])
    print(f"{runs['rss'][0]['docs']:.0f} documents, warm restart, medians of {RUNS} runs:")
    print(f"  Python heap per document (tracemalloc): {heap:,.0f} B")
    print(f"  resident memory per document (VmRSS):   {rss:,.0f} B")


if __name__ == "__main__":
    main()
