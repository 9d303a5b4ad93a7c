"""The size cap of one Level 3 element: exact JSON sizes, and the bounded form of a big element."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpe_server.model.tree import JSON, Category, Element
from dpe_server.views import element_cap
from dpe_server.views.element_cap import (
    DEFAULT_MAX_ELEMENT_BYTES,
    MIN_KEPT_CHARS,
    MIN_MAX_ELEMENT_BYTES,
    cap_element,
    json_size,
    size_within,
)
from dpe_server.views.payloads import element_view
from dpe_server.views.render import render

CAP = 64 * 1024


def _table(rows: int, cols: int, cell: int) -> dict[str, JSON]:
    """The Level 3 payload of a table element built here: `rows` x `cols` cells of `cell`
    characters, each cell's text naming its place first (r3c1: ...)."""
    body = [
        [f"r{r}c{c}:" + "abcdefghij"[(r + c) % 10] * cell for c in range(cols)] for r in range(rows)
    ]
    element = Element(
        "p0-tbl1",
        Category.TABLE,
        f"Table ({rows} rows × {cols} columns)",
        {"headers": [f"h{c}" for c in range(cols)], "rows": body},
        {"source_range": "A1:C9"},
    )
    return element_view("local.dpe.t", "book-123456", 0, element)


def _body(payload: dict[str, JSON]) -> str:
    return render(3, payload, "json")


scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300)
@given(values)
def test_json_size_is_the_size_of_the_served_json(value: JSON) -> None:
    text = json.dumps(value, ensure_ascii=False, indent=2)
    assert json_size(value) == len(text.encode("utf-8", "surrogatepass"))


@settings(max_examples=200)
@given(values, st.integers(min_value=0, max_value=400))
def test_size_within_is_the_size_up_to_the_limit(value: JSON, limit: int) -> None:
    size = json_size(value)
    assert size_within(value, limit) == (size if size <= limit else None)


def test_size_within_stops_before_escaping_a_string_past_the_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    escaped: list[int] = []
    encode = element_cap._encode

    def recording(text: str) -> str:
        escaped.append(len(text))
        return encode(text)

    monkeypatch.setattr(element_cap, "_encode", recording)
    assert size_within({"a": "short", "b": "x" * 100_000, "c": "never"}, 1000) is None
    assert escaped == [1, 5, 1]  # "a", "short", "b": then the long string is past the limit


def test_cap_leaves_an_element_under_the_cap_as_it_is() -> None:
    payload = _table(5, 3, 100)
    assert cap_element(payload, CAP) is payload
    assert cap_element(_table(60, 3, 2_000), 0) == _table(60, 3, 2_000)  # 0: no cap


def test_cap_cuts_long_cells_of_an_element_over_it_to_fit() -> None:
    payload = _table(60, 3, 2_000)  # about 380 KB of JSON
    body = _body(cap_element(payload, CAP))
    assert len(body.encode()) <= CAP < len(_body(payload).encode())


def test_cap_keeps_every_row_and_where_each_cell_starts() -> None:
    cut = cap_element(_table(60, 3, 2_000), CAP)
    rows = cut["content"]["rows"]
    assert len(rows) == cut["content"]["total_rows"] == 60
    assert all(rows[r][c].startswith(f"r{r}c{c}:") for r in range(60) for c in range(3))
    assert "rows_truncated" not in cut["content"]


def test_cap_marks_each_cut_string_with_its_length() -> None:
    cut = cap_element(_table(60, 3, 2_000), CAP)
    cell = cut["content"]["rows"][7][2]
    kept = cut["cut"]["kept_chars"]
    assert cell.endswith(f"…[cut: {len('r7c2:') + 2_000:,} characters in all]")
    assert cell.startswith(_table(60, 3, 2_000)["content"]["rows"][7][2][:kept])
    assert MIN_KEPT_CHARS <= kept < 2_000


def test_cap_says_it_was_cut_and_how_large_it_was() -> None:
    payload = _table(60, 3, 2_000)
    cut = cap_element(payload, CAP)
    assert cut["cut"] == {
        "bytes": json_size(payload),
        "max_bytes": CAP,
        "strings_cut": 180,
        "kept_chars": cut["cut"]["kept_chars"],
    }
    assert {k: v for k, v in cut.items() if k not in ("content", "cut")} == {
        k: v for k, v in payload.items() if k != "content"
    }


def test_cap_drops_last_rows_when_short_cells_alone_pass_it() -> None:
    payload = _table(500, 40, 1)  # 20,000 short cells: cutting strings cannot help
    cut = cap_element(payload, MIN_MAX_ELEMENT_BYTES)
    rows = cut["content"]["rows"]
    assert len(_body(cut).encode()) <= MIN_MAX_ELEMENT_BYTES
    assert 0 < len(rows) < 500
    assert rows == payload["content"]["rows"][: len(rows)]
    assert cut["content"]["rows_truncated"] is True
    assert cut["content"]["total_rows"] == 500
    assert cut["cut"]["dropped"] == {"content.rows": 500 - len(rows)}


def test_cut_element_renders_a_note_in_markdown_and_text() -> None:
    cut = cap_element(_table(60, 3, 2_000), CAP)
    for fmt in ("markdown", "text"):
        body = render(3, cut, fmt)
        assert f"Cut to fit {CAP:,} bytes" in body
        assert "long texts keep their first" in body
        assert "[cut: 2,005 characters in all]" in body


def test_level3_table_with_dropped_rows_does_not_point_to_itself() -> None:
    cut = cap_element(_table(500, 40, 1), MIN_MAX_ELEMENT_BYTES)
    body = render(3, cut, "markdown")
    assert "of 500 rows*" in body
    assert "the whole table" not in body
    assert "list entries are left out" in body


def test_default_cap_is_stated_in_the_docs() -> None:
    from pathlib import Path

    docs = (Path(__file__).resolve().parents[2] / "docs" / "limits.md").read_text()
    assert f"{DEFAULT_MAX_ELEMENT_BYTES:,} bytes" in docs
