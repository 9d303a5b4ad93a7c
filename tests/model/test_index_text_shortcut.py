"""`words.element_text` takes a string that needs no collapsing (`_plain`) as its lines, as they
are: what the general rule (each phrase's whitespace collapsed) gives, for every kind of text
and every key that says no words."""

from __future__ import annotations

import random

from dpe_server.model.words import element_text, key_phrases

_PIECES = ["a", "é", " ", "  ", "\n", "\n\n", "\t", "\r", "\xa0", "\u2028", "\x0b", "\x1c", "x y"]


def _general(category: str, content: dict[str, str]) -> str:
    return "\n".join(
        " ".join(p.split()) for key in content for p in key_phrases(category, content, key)
    )


def test_plain_strings_give_what_the_general_rule_gives() -> None:
    rng = random.Random(7)
    for _ in range(4000):
        text = "".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 30)))
        for category, content in [
            ("text", {"text": text}),
            ("link", {"text": text, "url": text}),  # a url says no words
            ("image", {"text": text, "table": "t"}),  # the table's cells say them
            ("table", {"name": text, "caption": text}),  # a table's name is structure
        ]:
            assert element_text(category, content) == _general(category, content), repr(text)
