"""Non-negative integers from untrusted text: bounded before `int()` sees them."""

from __future__ import annotations

import pytest

from dpe_server.model.integers import MAX_DIGITS, NotAnInteger, TooLarge, parse_uint, uint_or_none


@pytest.mark.parametrize(
    ("text", "value"), [("0", 0), ("007", 7), ("9" * MAX_DIGITS, 10**MAX_DIGITS - 1)]
)
def test_parse_uint_reads_digits(text: str, value: int) -> None:
    assert parse_uint(text) == value
    assert uint_or_none(text) == value


@pytest.mark.parametrize("text", ["9" * (MAX_DIGITS + 1), "9" * 5000, "1" * 1_000_000])
def test_parse_uint_refuses_too_many_digits(text: str) -> None:
    with pytest.raises(TooLarge):
        parse_uint(text)
    assert uint_or_none(text) is None


@pytest.mark.parametrize("text", ["", "-1", "+1", " 1", "1.0", "1e3", "²", "٣", "0x10", "１"])
def test_parse_uint_refuses_what_is_not_ascii_digits(text: str) -> None:
    with pytest.raises(NotAnInteger):
        parse_uint(text)
    assert uint_or_none(text) is None
