"""Non-negative integers read from text a client or a checked server sent.

Python's `int()` refuses text of more than 4,300 digits with a `ValueError` whose message is
Python's own, and converting long digit strings costs time quadratic in their length. No page
index, offset, count or cursor this server deals in comes near 18 digits, so longer text is
refused before `int()` sees it: `parse_uint` says which of the two ways the text is wrong.
"""

from __future__ import annotations

import re

MAX_DIGITS = 18
"""A page index, offset, element number or cursor has at most this many digits."""

_DIGITS = re.compile(r"[0-9]+")


class NotAnInteger(ValueError):
    """The text is not a non-negative integer in ASCII digits."""


class TooLarge(ValueError):
    """The text is digits, more of them than `MAX_DIGITS`."""


def parse_uint(text: str) -> int:
    """`text` as a non-negative integer; raises `NotAnInteger` or `TooLarge`."""
    if not _DIGITS.fullmatch(text):
        raise NotAnInteger(text)
    if len(text) > MAX_DIGITS:
        raise TooLarge(text)
    return int(text)


def uint_or_none(text: str) -> int | None:
    """`text` as a non-negative integer, or None when `parse_uint` refuses it."""
    try:
        return parse_uint(text)
    except ValueError:
        return None
