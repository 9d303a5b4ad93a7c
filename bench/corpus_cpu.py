"""The extraction CPU of every corpus file, each in a fresh process, and optionally its tree.

    .venv/bin/python bench/corpus_cpu.py [--top 15] [--jobs 2] [--trees DIR] [--tsv FILE]
                                         [--corpus DIR]

Every file of the corpus (../shared/corpus unless `--corpus` says) the registry serves
(`tests.corpus_trees.corpus_files`) is extracted whole by its extractor (`for_path`) with the
corpus tests' limits (`tests.corpus_trees.LIMITS`: the production limits, OCR off) in a
process of its own (`--one PATH`), `--jobs` at a time. A file's figure is the CPU seconds
(user + system, of the process and of the children it waited for, such as a LibreOffice
conversion) of the extraction and of its tree's `to_json()`: the imports before are not
counted, but the first use of each library in the process is (about 0.07 s for a pdf; a
long-lived worker pays it once). Prints the slowest `--top` files and the total; `--tsv`
writes every file's line.

`--trees DIR` writes each file's tree (or its error kind and message) as JSON into DIR, one
file per document, so that two versions of the code can be compared file by file
(`diff -r BEFORE AFTER`). Run it from the checkout to measure: its `dpe_server` is imported.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dpe_server.extractors import for_path  # noqa: E402
from dpe_server.model.errors import ExtractionError  # noqa: E402
from tests.corpus_trees import LIMITS, corpus_files  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus"


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def one(path: Path, tree: Path | None) -> float:
    """Extract `path` in this process: the CPU seconds taken (and its tree written)."""
    extractor = for_path(path)
    assert extractor is not None
    start = _cpu()
    try:
        with path.open("rb") as f:
            data: object = extractor.extract(f, LIMITS).to_json()
    except ExtractionError as exc:
        data = {"error": exc.kind, "message": exc.message}
    seconds = _cpu() - start
    if tree is not None:
        tree.write_text(json.dumps(data, sort_keys=True, ensure_ascii=False, indent=1))
    return seconds


def _child(path: Path, corpus: Path, trees: Path | None) -> tuple[Path, float]:
    command = [sys.executable, __file__, "--one", str(path)]
    if trees is not None:
        name = str(path.relative_to(corpus)).replace("/", "__") + ".json"
        command += ["--tree", str(trees / name)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    lines = done.stdout.split()
    return path, float(lines[-1]) if done.returncode == 0 and lines else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--trees", type=Path)
    parser.add_argument("--tsv", type=Path)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--tree", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one is not None:
        print(f"{one(args.one, args.tree):.3f}")
        return
    if args.trees is not None:
        args.trees.mkdir(parents=True, exist_ok=True)
    corpus = args.corpus.resolve()
    files = sorted(corpus_files(corpus), key=lambda p: -p.stat().st_size)
    with ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda p: _child(p, corpus, args.trees), files))
    results.sort(key=lambda r: -r[1])
    lines = [f"{s:.3f}\t{p.suffix.lstrip('.')}\t{p.relative_to(corpus)}" for p, s in results]
    if args.tsv is not None:
        args.tsv.write_text("\n".join(lines) + "\n")
    print("cpu_s\tformat\tfile")
    print("\n".join(lines[: args.top]))
    print(f"total {sum(s for _, s in results):.2f} CPU s over {len(results)} files")


if __name__ == "__main__":
    main()
