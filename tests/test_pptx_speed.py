"""Speed of the pptx extractor against bare python-pptx, in process, on the issue's 100-slide
deck (title, 5 bullets on 2 levels, a table, a picture, notes per slide).

The target: within 3x of python-pptx walking every shape and the notes. Figures (medians of
3) are printed; run `pytest tests/test_pptx_speed.py -s` to see them.
"""

from __future__ import annotations

import importlib.util
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pptx import Presentation
from pptx.enum.shapes import MSO_SHAPE_TYPE

from dpe_server.extractors import DEFAULT_LIMITS
from dpe_server.extractors.pptx import extract, extract_pages

TARGET_RATIO = 3.0


@pytest.fixture(scope="module")
def bench_deck(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = Path(__file__).resolve().parents[1] / "fixtures" / "builders" / "pptx.py"
    spec = importlib.util.spec_from_file_location("pptx_builder_bench", root)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    path: Path = module.build_bench_deck(tmp_path_factory.mktemp("bench") / "bench100.pptx")
    return path


def _walk(shapes: Any, out: list[str]) -> None:
    for shape in shapes:
        if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
            _walk(shape.shapes, out)
        if shape.has_text_frame:
            out.append(shape.text_frame.text)
        if getattr(shape, "has_table", False) and shape.has_table:
            out.extend(cell.text for row in shape.table.rows for cell in row.cells)
        if shape.shape_type == MSO_SHAPE_TYPE.PICTURE:
            out.append(shape.image.content_type)


def _bare(path: Path) -> list[str]:
    prs = Presentation(str(path))
    out: list[str] = []
    for slide in prs.slides:
        _walk(slide.shapes, out)
        if slide.has_notes_slide:
            out.append(slide.notes_slide.notes_text_frame.text)
    return out


def _median(fn: Callable[[], object], runs: int = 3) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _ours(path: Path) -> object:
    with path.open("rb") as f:
        return extract(f, DEFAULT_LIMITS)


def test_pptx_speed_within_target_of_bare_python_pptx(bench_deck: Path) -> None:
    _bare(bench_deck)
    _ours(bench_deck)
    bare = _median(lambda: _bare(bench_deck))
    ours = _median(lambda: _ours(bench_deck))
    print(f"\npptx 100 slides: python-pptx {bare:.3f}s, dpe-server {ours:.3f}s, x{ours / bare:.2f}")
    assert ours < TARGET_RATIO * bare


def test_pptx_speed_one_slide_is_cheaper_than_the_deck(bench_deck: Path) -> None:
    def one() -> object:
        with bench_deck.open("rb") as f:
            return extract_pages(f, [50], DEFAULT_LIMITS)

    single = _median(one)
    whole = _median(lambda: _ours(bench_deck))
    print(f"\npptx slide 50 alone {single * 1000:.1f} ms, whole deck {whole * 1000:.1f} ms")
    assert single < whole / 3
