"""Speed of the pdf extractor against bare pypdf, like with like (in process, CPU time).

- all pages of a generated 200-page text-and-table PDF: within 3× of `extract_text` on
  every page;
- one page (index 37) of the corpus's 400-page PDF: within 20× of pypdf opening the file
  and extracting that page.

The tests time one run each (CPU time, so a busy machine does not fail them); for the
medians of three runs and the peak memory, run this file:

    .venv/bin/python tests/test_pdf_speed.py
"""

from __future__ import annotations

import importlib.util
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pypdf import PdfReader

ROOT = Path(__file__).resolve().parents[1]
BIG = (
    ROOT.parent / "shared" / "corpus" / "pdf" / "unstructured__pdf2image-memory-error-test-400p.pdf"
)
PAGE = 37

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from dpe_server.extractors import DEFAULT_LIMITS  # noqa: E402
from dpe_server.extractors import pdf as pdf_mod  # noqa: E402


def _builder() -> Any:
    path = ROOT / "fixtures" / "builders" / "pdf.py"
    spec = importlib.util.spec_from_file_location("pdf_fixture_builder_speed", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def bare_all(path: Path) -> None:
    reader = PdfReader(path)
    for page in reader.pages:
        page.extract_text()


def ours_all(path: Path) -> None:
    with path.open("rb") as f:
        pdf_mod.extract(f, DEFAULT_LIMITS)


def bare_one(path: Path) -> None:
    PdfReader(path).pages[PAGE].extract_text()


def ours_one(path: Path) -> None:
    with path.open("rb") as f:
        pdf_mod.extract_pages(f, [PAGE], DEFAULT_LIMITS)


def cpu_seconds(fn: Callable[[Path], None], path: Path, runs: int = 1) -> float:
    times = []
    for _ in range(runs):
        start = time.process_time()
        fn(path)
        times.append(time.process_time() - start)
    return statistics.median(times)


@pytest.fixture(scope="module")
def bench_pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path: Path = _builder().build_bench(tmp_path_factory.mktemp("bench") / "bench200.pdf")
    return path


def test_speed_all_pages_within_3x_of_bare_pypdf(bench_pdf: Path) -> None:
    bare = cpu_seconds(bare_all, bench_pdf)
    ours = cpu_seconds(ours_all, bench_pdf)
    assert ours <= 3 * bare, f"ours {ours:.2f}s vs bare pypdf {bare:.2f}s"


def test_speed_one_page_of_400_within_20x_of_bare_pypdf() -> None:
    if not BIG.is_file():
        pytest.skip("the 400-page corpus pdf is not present")
    bare = cpu_seconds(bare_one, BIG)
    ours = cpu_seconds(ours_one, BIG)
    assert ours <= 20 * bare, f"ours {ours:.3f}s vs bare pypdf {bare:.3f}s"


def main() -> None:
    """Medians of three runs, ratios and peak memory (the numbers in the report)."""

    with tempfile.TemporaryDirectory() as tmp:
        bench = _builder().build_bench(Path(tmp) / "bench200.pdf")
        for clock_name, clock in (("cpu", time.process_time), ("wall", time.perf_counter)):
            row = []
            for fn, path in (
                (bare_all, bench),
                (ours_all, bench),
                (bare_one, BIG),
                (ours_one, BIG),
            ):
                times = []
                for _ in range(3):
                    start = clock()
                    fn(path)
                    times.append(clock() - start)
                row.append(statistics.median(times))
            print(
                f"{clock_name}: 200 pages bare {row[0]:.2f}s ours {row[1]:.2f}s "
                f"ratio {row[1] / row[0]:.2f} | page {PAGE} of 400 bare {row[2]:.3f}s "
                f"ours {row[3]:.3f}s ratio {row[3] / row[2]:.2f}"
            )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(f"peak memory {peak} MB")


if __name__ == "__main__":
    main()
