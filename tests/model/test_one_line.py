"""`one_line` reads only the start of a long text when that start is cut all the same: the
same summary as collapsing the whole text's white space first."""

from __future__ import annotations

import random

from dpe_server.model.tree import one_line


def _whole(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def test_a_long_text_is_cut_as_its_whole_white_space_collapsed() -> None:
    rng = random.Random(34)
    pieces = ["word", "é", " ", "  ", "\n", "\t", "\u3000", "\u2003" * 60, " " * 500, "x" * 130]
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 300)))
        for limit in (10, 60, 120):
            assert one_line(text, limit) == _whole(text, limit), (text, limit)


def test_white_space_at_the_start_of_a_long_text_does_not_shorten_it() -> None:
    text = " " * 1000 + "a b " * 20
    assert one_line(text, 120) == "a b " * 19 + "a b"
    assert one_line(" " * 470 + "x" * 200) == "x" * 119 + "…"


def test_a_short_text_is_kept_as_it_is_only_when_it_is_one_line_already() -> None:
    """The shortcut returns a short printable text with no double nor outer space as it is:
    it relies on every white space but " " being unprintable."""
    spaces = [chr(c) for c in range(0x110000) if chr(c).isspace()]
    assert all(not c.isprintable() for c in spaces if c != " ")
    for space in spaces:
        for text in (f"a{space}b", f"{space}ab", f"ab{space}", f"a {space}b", f"a{space}{space}b"):
            assert one_line(text) == _whole(text, 120), repr(text)
    assert one_line("a b\u200bc") == "a b\u200bc"  # unprintable, not white space: kept
    assert one_line("x" * 120) == "x" * 120
    assert one_line("x" * 121) == "x" * 119 + "…"
