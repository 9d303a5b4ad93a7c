"""`words.normalise` and `key_phrases` take shortcuts on plain text (no escape, no `<br>`; a
string value) that give what the general rule gives, and a text element's Markdown leaves
nothing of it out (its body is its text): the extras a renderer would add are empty."""

from __future__ import annotations

import random
import re

from dpe_server.model.tree import JSON
from dpe_server.model.words import key_phrases, normalise, walk
from dpe_server.views.render_details import extras

_ESCAPE = re.compile(r"\\([\\\[\]|`*_])")
_PIECES = ["a", "é", " ", "\n", "\t", "\\", "\\*", "<br>", "|", "_", "\u2028", "\x0b", "[", "x y"]


def _texts(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 40))) for _ in range(count)]


def test_normalise_is_the_general_rule() -> None:
    for text in _texts(1, 3000):
        assert normalise(text) == " ".join(
            _ESCAPE.sub(r"\1", text.replace("<br>", "\n")).split()
        ), repr(text)


def test_a_string_s_phrases_are_its_lines() -> None:
    for text in _texts(2, 3000):
        assert key_phrases("text", {"text": text}, "text") == list(walk(text)), repr(text)


def test_a_text_element_s_body_says_every_phrase() -> None:
    for text in _texts(3, 3000):
        assert extras("text", {"text": text}, text, markdown=True) == "", repr(text)


def _extras_in_full(category: str, content: dict[str, JSON], shown: str) -> str:
    """`extras` without its shortcut: every phrase compared with the normalised rendering."""
    body = normalise(shown)
    lines: list[str] = []
    for key in content:
        left = [p for p in key_phrases(category, content, key) if normalise(p) not in body]
        lines += left if key == "text" else [f"{key}: {' '.join(left)}"] * bool(left)
    return "\n".join("- " + line for line in lines)


def test_a_rendering_that_holds_every_field_as_it_is_leaves_nothing_out() -> None:
    """The shortcut (`_all_said`: every string and number of the element's words found in the
    rendering as it is) gives what comparing phrase by phrase gives, escapes, `<br>`, line
    breaks and odd spaces included, whether the rendering holds them or not."""
    texts, urls = _texts(4, 1500), _texts(5, 1500)
    for n, (text, url) in enumerate(zip(texts, urls, strict=True)):
        items: list[JSON] = [
            {"text": text, "level": n % 3, "label": f"{n % 7}."},
            {"text": url, "level": 0, "checked": n % 2 == 0, "count": n % 5 + 0.5},
        ]
        contents: list[tuple[str, dict[str, JSON]]] = [
            ("link", {"text": text, "url": url}),
            ("heading", {"text": text, "level": n % 6}),
            ("list", {"items": items, "ordered": True}),
        ]
        for shown in (
            f"[{text}]({url})",
            f"{text} ({url})",
            f"[{text}]",
            f"# {url}",
            f"{n % 7}. {text}\n- {url} {n % 5 + 0.5}",
            f"{n % 7}. {text}\n- {url}",
        ):
            for category, content in contents:
                assert extras(category, content, shown, markdown=True) == _extras_in_full(
                    category, content, shown
                ), (content, shown)
