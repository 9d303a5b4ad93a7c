"""Row blocks (SPEC §4): one splitter for every format, and a pptx table larger than a block."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpe_server.extractors import DEFAULT_LIMITS
from dpe_server.extractors.kit.row_blocks import split_rows
from dpe_server.extractors.pptx.extract import extract
from dpe_server.model.tree import JSON, TABLE_BLOCK_ROWS, Category


def test_split_rows_marks_index_of_and_source_rows() -> None:
    blocks = split_rows(list(range(7)), head_rows=1, size=3)
    assert [b.mark() for b in blocks] == [
        {"index": 0, "of": 3, "first_row": 2, "last_row": 4},
        {"index": 1, "of": 3, "first_row": 5, "last_row": 7},
        {"index": 2, "of": 3, "first_row": 8, "last_row": 8},
    ]
    assert [list(b.rows) for b in blocks] == [[0, 1, 2], [3, 4, 5], [6]]


def test_split_rows_without_header_counts_from_the_first_row() -> None:
    assert [b.mark()["first_row"] for b in split_rows(list(range(4)), 0, size=2)] == [1, 3]


def test_split_rows_one_block_is_not_marked() -> None:
    (block,) = split_rows([], head_rows=1)
    meta: dict[str, JSON] = {}
    block.place(meta)
    assert list(block.rows) == []
    assert meta == {}


def test_pptx_table_larger_than_a_block(tmp_path: Path) -> None:
    pptx = pytest.importorskip("pptx")
    from pptx.util import Emu

    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[6])
    body = TABLE_BLOCK_ROWS + 3
    shape = slide.shapes.add_table(body + 1, 2, Emu(0), Emu(0), Emu(1_000_000), Emu(1_000_000))
    cells = shape.table
    cells.cell(0, 0).text, cells.cell(0, 1).text = "Id", "Value"
    for r in range(1, body + 1):
        cells.cell(r, 0).text, cells.cell(r, 1).text = str(r), f"v{r}"
    path = tmp_path / "long-table.pptx"
    deck.save(str(path))
    with path.open("rb") as f:
        doc = extract(f, DEFAULT_LIMITS)
    tables = [e for e in doc.pages[0].elements if e.category is Category.TABLE]
    assert [t.metadata["row_block"] for t in tables] == [
        {"index": 0, "of": 2, "first_row": 2, "last_row": TABLE_BLOCK_ROWS + 1},
        {"index": 1, "of": 2, "first_row": TABLE_BLOCK_ROWS + 2, "last_row": body + 1},
    ]
    assert all(t.content["headers"] == ["Id", "Value"] for t in tables)
    assert [t.content["total_rows"] for t in tables] == [TABLE_BLOCK_ROWS, 3]
    assert [len(t.content["rows"]) for t in tables] == [TABLE_BLOCK_ROWS, 3]
    assert tables[0].content["rows"][0] == ["1", "v1"]
    assert tables[1].content["rows"][-1] == [str(body), f"v{body}"]
