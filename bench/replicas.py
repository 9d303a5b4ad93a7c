"""Extraction throughput of 1, 2 and 3 replicas sharing one PostgreSQL (issue 22).

    .venv/bin/python bench/replicas.py [--documents 300] [--runs 3] [--replicas 1,2,3]
                                       [--url postgresql://…]

A folder of `--documents` Word documents (one generated file, copied: each copy is its own
document version) is served by K `dpe-server serve --transport http --store URL` processes
at once, each with one worker; the time is from the start of the first process to the moment
the shared jobs table says every document is extracted (documents/s = documents / time; it
includes the processes' start-up and their probes). Without `--url` a throw-away PostgreSQL
is started (`tests/postgres.py`) and each run gets a fresh database. Prints per K the median
documents/s over the runs, its ratio to K=1, and the extraction claims per document (1.0:
each extracted exactly once).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests import postgres  # noqa: E402
from tests.e2e.harness import free_port, write_doc  # noqa: E402


def _folder(base: Path, count: int) -> Path:
    folder = base / "docs"
    write_doc(folder / "d0000.docx", ["First", "Second", "Third"])
    for i in range(1, count):
        shutil.copyfile(folder / "d0000.docx", folder / f"d{i:04}.docx")
    return folder


def _fresh_db(admin: str, name: str) -> str:
    with psycopg.connect(admin, autocommit=True) as db:
        db.execute(f"DROP DATABASE IF EXISTS {name}")
        db.execute(f"CREATE DATABASE {name}")
    return admin.rsplit("/", 1)[0] + "/" + name


def _done(url: str) -> tuple[int, int]:
    """(documents extracted, claims so far)."""
    try:
        with psycopg.connect(url) as db:
            row = db.execute(
                "SELECT count(*) FILTER (WHERE done), sum(attempts) FROM jobs"
            ).fetchone()
    except psycopg.Error:  # the schema is not there yet
        return 0, 0
    assert row is not None
    return int(row[0]), int(row[1] or 0)


def one_run(
    folder: Path, url: str, replicas: int, documents: int, scratch: Path
) -> tuple[float, float]:
    """(documents/s, claims per document) of `replicas` servers extracting `folder`."""
    procs = []
    start = time.monotonic()
    try:
        for i in range(replicas):
            cache = scratch / f"cache-{i}"
            args = [sys.executable, "-m", "dpe_server", "serve", str(folder), "--transport",
                    "http", "--port", str(free_port()), "--store", url, "--workers", "1",
                    "--cache-dir", str(cache)]  # fmt: skip
            procs.append(
                subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            )
        while True:
            done, claims = _done(url)
            if done >= documents:
                return documents / (time.monotonic() - start), claims / documents
            if any(p.poll() is not None for p in procs):
                raise RuntimeError("a replica exited")
            time.sleep(0.05)
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=300)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--replicas", default="1,2,3")
    parser.add_argument("--url", default="", help="an existing server (default: start one)")
    args = parser.parse_args()
    counts = [int(k) for k in args.replicas.split(",")]
    out = ROOT / "bench" / "out"
    out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="replicas-", dir=out))
    server = None
    admin = args.url
    if not admin:
        bins = postgres.bin_dir()
        if bins is None:
            sys.exit(postgres.available())
        server = postgres.Postgres(bins)
        server.start()
        admin = server.url
    try:
        folder = _folder(scratch, args.documents)
        rates: dict[int, list[float]] = {k: [] for k in counts}
        claims: dict[int, list[float]] = {k: [] for k in counts}
        for run in range(args.runs):
            for k in counts:  # alternated, so a busy moment of the machine costs every K
                url = _fresh_db(admin, f"bench_replicas_{k}_{run}")
                rate, per_doc = one_run(folder, url, k, args.documents, scratch / f"{k}-{run}")
                rates[k].append(rate)
                claims[k].append(per_doc)
        base = statistics.median(rates[counts[0]])
        print(f"{args.documents} documents, {args.runs} runs, medians")
        print("| replicas | documents/s | vs 1 replica | claims per document |")
        print("|---|---|---|---|")
        for k in counts:
            rate = statistics.median(rates[k])
            print(f"| {k} | {rate:.1f} | {rate / base:.2f} | {max(claims[k]):.2f} |")
    finally:
        if server is not None:
            server.destroy()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
