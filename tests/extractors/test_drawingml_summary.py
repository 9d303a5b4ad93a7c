"""Chart data summaries: trends, extremes, shares, number formatting."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpe_server.extractors.kit.charts import data_summary, format_number
from dpe_server.model.tree import JSON


def series_of(name: str, values: list[JSON], cats: list[str] | None = None) -> dict[str, JSON]:
    return {
        "name": name,
        "categories": cats or [f"C{i + 1}" for i in range(len(values))],
        "values": values,
    }


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        pytest.param(
            [3, 2, 1], "S falls from 3 (C1) to 1 (C3); highest 3 (C1), lowest 1 (C3).", id="falling"
        ),
        pytest.param([5, 5, 5], "S stays at 5 across 3 points.", id="flat"),
        pytest.param(
            [1, 9, 4],
            "S goes from 1 (C1) to 4 (C3) with ups and downs; highest 9 (C2), lowest 1 (C1).",
            id="mixed",
        ),
        pytest.param(
            [1, None, 3],
            "S rises from 1 (C1) to 3 (C3); highest 3 (C3), lowest 1 (C1).",
            id="blank",
        ),
        pytest.param([42], "S: 42 (C1).", id="single"),
        pytest.param([None], "S has no values.", id="none"),
    ],
)
def test_data_summary_trend(values: list[JSON], expected: str) -> None:
    assert data_summary("line", [series_of("S", values)]) == expected


def test_data_summary_pie_shares_largest_first() -> None:
    s = series_of("Region", [650, 1200, 800], ["North", "East", "West"])
    assert data_summary("pie", [s]) == (
        "Region: East 45% (1,200), West 30% (800), North 25% (650); total 2,650."
    )


def test_data_summary_describes_at_most_three_series() -> None:
    text = data_summary("column", [series_of(f"S{i}", [1, 2]) for i in range(5)])
    assert "S2 rises" in text
    assert "S3" not in text
    assert text.endswith("2 more series not described.")


def test_data_summary_unnamed_series() -> None:
    assert data_summary("line", [series_of("", [1, 2])]).startswith("Series 1 rises")


def test_data_summary_no_series() -> None:
    assert data_summary("line", []) == "No data series."


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(1250, "1,250", id="int"),
        pytest.param(1250.0, "1,250", id="integral-float"),
        pytest.param(1234.5678, "1,234.57", id="decimals"),
        pytest.param(2.50, "2.5", id="trimmed"),
        pytest.param(0.012345, "0.0123", id="small"),
        pytest.param(-3.0, "-3", id="negative"),
        pytest.param(0.0, "0", id="zero"),
    ],
)
def test_format_number(value: float, expected: str) -> None:
    assert format_number(value) == expected


def test_data_summary_scatter_reads_points_in_x_order() -> None:
    s = series_of("Y", [30, 10, 20], ["3", "1", "2"])
    assert data_summary("scatter", [s]) == (
        "Y rises from 10 (x=1) to 30 (x=3); highest 30 (x=3), lowest 10 (x=1)."
    )


def test_data_summary_pie_counts_other_series() -> None:
    pie = [series_of("A", [1, 1]), series_of("B", [2])]
    assert data_summary("doughnut", pie).endswith("total 2. 1 more series not described.")


NUMBERS = st.one_of(
    st.none(), st.integers(-(10**15), 10**15), st.floats(allow_nan=True, allow_infinity=True)
)


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["line", "pie", "scatter", "column"]),
    st.lists(st.lists(NUMBERS, max_size=12), max_size=5),
)
def test_data_summary_always_one_english_line(kind: str, values: list[list[JSON]]) -> None:
    series = [series_of(f"S{i}", v) for i, v in enumerate(values)]
    text = data_summary(kind, series)
    assert text.endswith(".")
    assert "\n" not in text


def test_data_summary_ignores_non_finite_values() -> None:
    s = series_of("S", [1, float("nan"), float("inf"), 3])
    assert (
        data_summary("line", [s]) == "S rises from 1 (C1) to 3 (C4); highest 3 (C4), lowest 1 (C1)."
    )


def test_data_summary_shortens_long_categories() -> None:
    s = series_of("S", [1, 2], ["short", "a very long\ncategory label " + "x" * 60])
    text = data_summary("line", [s])
    assert "(a very long category label xxxxxxxxxxxx…)" in text
