"""What a pass over a pdf page yields: positioned text runs, ruling segments, image draws.

Everything is in page space (points, origin bottom left).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

_MONO = (
    "courier",
    "mono",
    "consolas",
    "menlo",
    "monaco",
    "typewriter",
    "cmtt",
    "sftt",
    "lettergothic",
)
_BOLD = ("bold", "black", "heavy", "semibold", "demi")


TextAt = Callable[[tuple[float, float, float, float]], str]
"""The page text inside a rectangle (x0, y0, x1, y1)."""


@dataclass(slots=True)
class Run:
    """A piece of text on one baseline."""

    text: str
    x0: float
    x1: float
    y: float
    size: float
    font: str
    bold: bool
    mono: bool
    spans: tuple[tuple[int, float, float], ...] = ()
    """Per word, when known: its offset in `text`, the x where its first glyph starts and
    the x where its last glyph ends (start > end for a right-to-left word)."""
    space_after: bool = False
    """Its last word is followed by a space character at its line's end in the page's text
    (a writer's space, as Korean lines that break between words end): the line that
    continues it begins a new word, whatever its script."""
    visual: str = ""
    """On a page holding right-to-left text: the run as drawn, left to right (`visual`),
    from which its line's text is read in logical order; `text` is the run's own reading."""


@dataclass(frozen=True, slots=True)
class Segment:
    """A horizontal or vertical ruling line."""

    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def horizontal(self) -> bool:
        return abs(self.y1 - self.y0) < abs(self.x1 - self.x0)


@dataclass(frozen=True, slots=True)
class Draw:
    """An image drawn on the page: its pixel size and where it sits (x0, y0, x1, y1)."""

    width: int
    height: int
    box: tuple[float, float, float, float]


@dataclass(slots=True)
class PageContent:
    """What one pass over a page found."""

    runs: list[Run] = field(default_factory=list)
    segments: list[Segment] = field(default_factory=list)
    draws: list[Draw] = field(default_factory=list)
    chars: int = 0
    truncated: bool = False
    box: tuple[float, float, float, float] = (0.0, 0.0, 612.0, 792.0)
    """The page's visible area (x0, y0, x1, y1): its crop box within its media box."""
    annots: int = 0
    """How many entries the page's /Annots array holds."""
    unmapped: int = 0
    """How many glyphs of its text layer have no character (`glyphs.read_runs`)."""


_SURROGATE = re.compile("[\ud800-\udfff]")


def plain(text: str) -> str:
    """Text safe to send as UTF-8: surrogate pairs joined, lone surrogates and NULs replaced."""
    if "\x00" in text:
        text = text.replace("\x00", "")
    if _SURROGATE.search(text):
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def font_name(font_dict: Any) -> str:
    """The font's base name without the subset prefix (`ABCDEF+Helvetica` → `Helvetica`)."""
    try:
        base = str(font_dict.get("/BaseFont", "")) if font_dict is not None else ""
    except (AttributeError, TypeError, ValueError):
        return ""
    base = base.lstrip("/")
    if len(base) > 7 and base[6] == "+":
        base = base[7:]
    return base


def is_mono(name: str) -> bool:
    low = name.lower()
    return any(m in low for m in _MONO)


def is_bold(name: str) -> bool:
    low = name.lower()
    return any(b in low for b in _BOLD)
