"""The text the search index holds of a table (`model.words.element_text`): its cells read in
a few C-level calls (issue 37: a 50,000 x 10 sheet took longer to index than to extract) give
what the phrase walk gives, whatever whitespace the cells hold."""

from __future__ import annotations

from typing import Any

import pytest

from dpe_server.model import words


def walked(category: str, content: dict[str, Any]) -> str:
    """The phrase walk, cell by cell: what `element_text` gave for every element."""
    return "\n".join(" ".join(p.split()) for p in words.phrases(category, content))


ROWS = [
    [["a", "b"], ["", "c d"]],
    [["", ""], ["", ""]],
    [],
    [[" lead", "trail ", "two  spaces"]],
    [["tab\there", "cr\r", "line\nbreak", "crlf\r\nx"]],
    [["nbsp\xa0x", "sep\u2028y", "ideo\u3000z", "é ü"]],
    [["\x1cfile", "unit\x1f", "vt\x0bff\x0c"]],
    [["x"], ["y", "z"]],
    [["1", None, True]],  # not all strings: walked
    ["not a row"],
]


@pytest.mark.parametrize("rows", ROWS, ids=range(len(ROWS)))
@pytest.mark.parametrize("category", ["table", "pivot_table"])
def test_table_cells_index_as_the_phrase_walk_gives_them(category: str, rows: Any) -> None:
    content = {"headers": ["H 1", "H\t2"], "rows": rows, "total_rows": len(rows), "name": "T"}
    assert words.element_text(category, content) == walked(category, content)


def test_a_large_table_is_indexed_without_a_step_per_cell(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rows = [[f"id {r}", "word", f"{r * 0.25}", "2020-01-01", ""] for r in range(5_000)]
    content = {"headers": ["Id", "Name", "Amount", "Date", "Empty"], "rows": rows}
    expected = walked("table", content)
    calls = 0
    walk = words.walk

    def counted(value: Any) -> Any:
        nonlocal calls
        calls += 1
        return walk(value)

    monkeypatch.setattr(words, "walk", counted)
    assert words.element_text("table", content) == expected
    assert calls < 10  # the headers' walk, not one per row or cell
