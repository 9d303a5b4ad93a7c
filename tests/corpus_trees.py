"""Every document of ../shared/corpus extracted once per test session, for every corpus test.

The format sweeps (tests/extractors/test_*_corpus.py), the Markdown-recall rule and the content
shapes all look at the same trees: `extract_corpus` reads each file the registry knows once, with
the production limits (OCR off), two worker processes at a time (largest first), and hands back its
`Document` or its error, with what it wrote to stderr. Crash and hang isolation per file is
the server's (tests/hostile/test_corpus_sweep.py reads the whole corpus through a real
server and its workers); here a file that hangs or kills its worker is reported as
`timeout` or `crash` and fails the tests that look at it.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from multiprocessing.pool import AsyncResult
from pathlib import Path

from dpe_server.extractors import DEFAULT_LIMITS, for_path
from dpe_server.model.errors import ExtractionError
from dpe_server.model.tree import Document

LIMITS = dataclasses.replace(DEFAULT_LIMITS, ocr="off")
"""The production limits without OCR: the corpus tests look at structure, words of text layers
and shapes; OCR (tests/extractors/test_ocr.py) would add minutes of CPU for the corpus's few
scans."""
DEADLINE_S = 600.0
"""For the whole corpus, generous for a busy machine: extracting a file in a fresh process, the
slowest (a pdf) takes about 2 s of CPU, the whole corpus about 10 s."""


@dataclass(frozen=True)
class Outcome:
    """One file's extraction: its tree, or the kind and message of its error."""

    doc: Document | None
    kind: str
    """`ok`, an `ExtractionError` kind, or `timeout` / `crash` (the worker never answered)."""
    message: str = ""
    stderr: str = ""
    seconds: float = 0.0


def corpus_files(corpus: Path) -> list[Path]:
    """Every file of the corpus the server would serve, sorted."""
    return sorted(p for p in corpus.rglob("*") if p.is_file() and for_path(p) is not None)


def _extract(path: str) -> Outcome:
    """In a worker: extract `path`, capturing what is written to file descriptor 2."""
    extractor = for_path(Path(path))
    assert extractor is not None
    start = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(err.fileno(), 2)
        try:
            with open(path, "rb") as f:
                outcome = Outcome(extractor.extract(f, LIMITS), "ok")
        except ExtractionError as exc:
            outcome = Outcome(None, exc.kind, exc.message)
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace").strip()
    seconds = round(time.perf_counter() - start, 2)
    return Outcome(outcome.doc, outcome.kind, outcome.message, stderr, seconds)


def extract_corpus(corpus: Path, workers: int = 2) -> dict[Path, Outcome]:
    """Every corpus file's outcome, extracted in `workers` fresh processes."""
    files = sorted(corpus_files(corpus), key=lambda p: -p.stat().st_size)
    context = multiprocessing.get_context("spawn")  # no fork of a process running threads
    deadline = time.monotonic() + DEADLINE_S
    outcomes: dict[Path, Outcome] = {}
    with context.Pool(workers) as pool:
        pending: dict[Path, AsyncResult[Outcome]] = {
            path: pool.apply_async(_extract, (str(path),)) for path in files
        }
        for path, result in pending.items():
            try:
                outcomes[path] = result.get(max(0.0, deadline - time.monotonic()))
            except multiprocessing.TimeoutError:
                outcomes[path] = Outcome(None, "timeout", f"not done within {DEADLINE_S:g} s")
            except Exception as exc:  # the worker's own failure: a finding, asserted on
                outcomes[path] = Outcome(None, "crash", repr(exc)[:2000])
        pool.terminate()
    return dict(sorted(outcomes.items()))
