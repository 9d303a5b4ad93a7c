"""Recognised words → lines of text in reading order (for pictures, whose text is one string).

Words are grouped into a line while their boxes overlap vertically by at least half the
smaller height; lines go top to bottom, words in a line left to right.
"""

from __future__ import annotations

from collections.abc import Sequence

from dpe_server.extractors.ocr.words import Word


def _same_line(a: Word, b: Word) -> bool:
    overlap = min(a.y1, b.y1) - max(a.y0, b.y0)
    return overlap >= 0.5 * min(a.y1 - a.y0, b.y1 - b.y0)


def lines(words: Sequence[Word]) -> list[list[Word]]:
    out: list[list[Word]] = []
    for word in sorted(words, key=lambda w: (w.y0 + w.y1) / 2):
        if out and _same_line(out[-1][-1], word):
            out[-1].append(word)
        else:
            out.append([word])
    return [sorted(line, key=lambda w: w.x0) for line in out]


def text_of(words: Sequence[Word]) -> str:
    return "\n".join(" ".join(w.text for w in line) for line in lines(words))
