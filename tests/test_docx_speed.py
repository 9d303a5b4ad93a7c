"""The docx extractor stays in the same league as bare python-docx (issue 5's bound: within
3× of python-docx iterating the paragraphs and table cells of a generated 200-paragraph
document). CPU time, median of 3, so that a busy machine does not decide the outcome."""

from __future__ import annotations

import importlib.util
import io
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import docx as python_docx

from dpe_server.extractors import DEFAULT_LIMITS
from dpe_server.extractors.docx import extract

ROOT = Path(__file__).resolve().parents[1]


def _bench_document(tmp: Path) -> bytes:
    sys.path.insert(0, str(ROOT / "fixtures"))
    try:
        spec = importlib.util.spec_from_file_location(
            "docx_builder_speed", ROOT / "fixtures" / "builders" / "docx.py"
        )
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(ROOT / "fixtures"))
    path: Path = module.build_bench(tmp / "bench.docx")
    return path.read_bytes()


def _median_cpu(work: Callable[[], object], runs: int = 3) -> float:
    times = []
    for _ in range(runs):
        start = time.process_time()
        work()
        times.append(time.process_time() - start)
    return statistics.median(times)


def test_speed_bench_document_within_3x_of_python_docx(tmp_path: Path) -> None:
    data = _bench_document(tmp_path)

    def bare() -> int:
        doc = python_docx.Document(io.BytesIO(data))
        n = sum(len(p.text) for p in doc.paragraphs)
        for table in doc.tables:
            for row in table.rows:
                n += sum(len(c.text) for c in row.cells)
        return n

    def ours() -> object:
        return extract(io.BytesIO(data), DEFAULT_LIMITS)

    bare(), ours()  # warm imports and caches
    assert _median_cpu(ours) <= 3 * _median_cpu(bare)
