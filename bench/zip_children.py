"""Issue 35's bench: a zip of 500 small docx, every member to Level 0 (each child extracted,
its title and summary listed), whole process, vs `markitdown` converting the zip.

    .venv/bin/python bench/zip_children.py [--runs N]

Writes the zip into bench/out/zip-children/ (git-ignored) from `fixtures.builders.protected`'s
minimal docx; the dpe side is this script re-run with `--dpe DIR` in a fresh interpreter (the
catalog on a worker pool and a memory store, from import to every child current);
markitdown is bench/out/venv-markitdown's (run.py installs it), skipped when absent. Prints
each run's wall and CPU seconds (the process with its reaped children) and the load average
when it started, the sides alternated, and the medians' ratios.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
import zipfile
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"
MEMBERS = 500


def write_zip(folder: Path) -> Path:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from fixtures.builders.protected import FIXED, plain_docx

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "docs.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for i in range(MEMBERS):
            text = [f"Memo {i}", f"Paragraph of memo {i} with some words.", "Another one."]
            z.writestr(zipfile.ZipInfo(f"docs/memo-{i:03}.docx", FIXED), plain_docx(text))
    return path


def dpe(folder: Path) -> None:
    """Serve `folder` until every document, children included, is extracted."""
    import anyio

    from dpe_server.catalog.catalog import Catalog
    from dpe_server.catalog.store import MemoryStore
    from dpe_server.isolation.workers import ProcessBackend

    async def main() -> None:
        backend = ProcessBackend()
        async with anyio.create_task_group() as tg:
            catalog = Catalog(folder, "bench", backend, store=MemoryStore())
            await catalog.start(tg)
            await catalog.warm()
            while len(catalog.entries()) <= MEMBERS or catalog.indexing():
                await anyio.sleep(0.02)
            entries = catalog.entries()
            failed = sum(1 for e in entries if e.failed)
            print(f"{len(entries)} documents, {failed} failed", file=sys.stderr)
            tg.cancel_scope.cancel()
        await backend.aclose()

    anyio.run(main)


def timed(argv: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of a command (CPU: its own and its reaped children's)."""
    before = os.times()
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = os.times()
    return wall, (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--dpe", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.dpe is not None:
        dpe(args.dpe)
        return
    path = write_zip(OUT / "zip-children")
    sides = {"dpe": [sys.executable, __file__, "--dpe", str(path.parent)]}
    markitdown = OUT / "venv-markitdown" / "bin" / "markitdown"
    if markitdown.exists():
        sides["markitdown"] = [str(markitdown), str(path)]
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in sides}
    for _ in range(args.runs):
        for name, argv in sides.items():
            load = os.getloadavg()[0]
            wall, cpu = timed(argv)
            runs[name].append((wall, cpu))
            print(f"{name}: {wall:.2f} s wall, {cpu:.2f} s CPU (load {load:.1f})", file=sys.stderr)
    medians = {
        name: (statistics.median(r[0] for r in rs), statistics.median(r[1] for r in rs))
        for name, rs in runs.items()
    }
    for name, (wall, cpu) in medians.items():
        print(f"{name} medians: {wall:.2f} s wall, {cpu:.2f} s CPU")
    if "markitdown" in medians:
        (dw, dc), (mw, mc) = medians["dpe"], medians["markitdown"]
        print(f"ratio to markitdown: wall {dw / mw:.3f}, CPU {dc / mc:.3f} (target <= 0.2)")


if __name__ == "__main__":
    main()
