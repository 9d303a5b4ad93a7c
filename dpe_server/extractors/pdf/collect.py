"""One pass over a pdf page's content stream: positioned text runs, ruling lines, image draws.

pypdf's `extract_text` calls `visitor_text` with each piece of text it has gathered on one
baseline, with the text matrix, the current transformation matrix, the font resource and the
font size; `visitor_operand_before` sees every operator. `collect_page` records:

- `Run`s: text, start x, estimated end x (the font's glyph widths when pypdf knows them,
  else half an em per character), baseline y, rendered size, font name, bold, monospace;
- axis-aligned ruling `Segment`s from `re` and `m`/`l` path operators (for ruled tables);
- the names of image XObjects drawn with `Do` and their boxes (from the CTM).

Everything is in page space (points, origin bottom left). pypdf walks a form XObject's
content with a fresh CTM, so the collector keeps a stack of where each form sits (the CTM
at its `Do`, times the form's /Matrix for forms of the page's own resources) and maps the
form's text and rules through it.
"""

from __future__ import annotations

import contextlib
import math
import re
from dataclasses import dataclass, field
from typing import Any

from pypdf import PageObject, mult

MAX_SEGMENTS = 4_000
"""Ruling segments kept per page; vector-heavy pages (maps, charts) stop there."""

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
_CJK_START = 0x2E80


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


@dataclass(slots=True)
class PageContent:
    """What one pass over a page found."""

    runs: list[Run] = field(default_factory=list)
    segments: list[Segment] = field(default_factory=list)
    draws: dict[str, tuple[float, float, float, float]] = field(default_factory=dict)
    chars: int = 0
    truncated: bool = False


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


class _Widths:
    """Glyph widths per font resource, from pypdf's own font model (cached per page)."""

    def __init__(self) -> None:
        self._cache: dict[int, tuple[Any, dict[str, float], float]] = {}

    def width(self, font_dict: Any, text: str, size: float) -> float:
        widths, default = self._widths(font_dict)
        total = 0.0
        for ch in text:
            w = widths.get(ch)
            if w is None:
                w = 1000.0 if ord(ch) >= _CJK_START else default
            total += w
        return total * size / 1000.0

    def _widths(self, font_dict: Any) -> tuple[dict[str, float], float]:
        if font_dict is None:
            return {}, 500.0
        key = id(font_dict)
        hit = self._cache.get(key)
        if hit is not None:
            return hit[1], hit[2]
        widths: dict[str, float] = {}
        default = 500.0
        try:
            from pypdf.generic._font import Font

            font = Font.from_font_resource(font_dict)
            widths = {k: float(v) for k, v in font.character_widths.items() if isinstance(k, str)}
            default = float(widths.get("default", 500.0)) or 500.0
        except (ImportError, AttributeError, KeyError, TypeError, ValueError, IndexError):
            pass
        if not 100.0 <= default <= 1200.0:
            default = 500.0
        self._cache[key] = (font_dict, widths, default)
        return widths, default


def _apply(m: list[float], x: float, y: float) -> tuple[float, float]:
    return m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5]


_IDENTITY = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0]


def _matrix(value: Any) -> list[float] | None:
    try:
        m = [float(v) for v in value[:6]]
    except (TypeError, ValueError, IndexError, KeyError):
        return None
    return m if len(m) == 6 and all(math.isfinite(v) for v in m) else None


class _Collector:
    """The visitors; `forms` tracks the form XObjects being walked (see `_enter_form`)."""

    def __init__(self, max_chars: int, xobjects: Any) -> None:
        self.content = PageContent()
        self.max_chars = max_chars
        self.widths = _Widths()
        self.fonts: dict[int, tuple[str, bool, bool]] = {}
        self.point: tuple[float, float] | None = None
        self.xobjects = xobjects
        self.forms: list[tuple[list[float], bool]] = []

    def _outer(self) -> list[float] | None:
        """User-space matrix of the innermost form being walked (None on the page itself)."""
        for matrix, entered in reversed(self.forms):
            if entered:
                return matrix
        return None

    def _ctm(self, cm: Any) -> Any:
        outer = self._outer()
        return cm if outer is None else mult(cm, outer)

    def _enter_form(self, name: Any, cm: Any) -> None:
        """A `Do`: pypdf walks a form's content with a fresh CTM, so remember where it sits.

        pypdf calls the text visitor once more for the page's pending text before walking
        the form, so the entry only takes effect ("entered") at the form's first operator.
        """
        parent = self._outer() or _IDENTITY
        matrix = None
        if not self.forms and self.xobjects is not None:
            try:
                form = self.xobjects.get_object().get(name)
                form = form.get_object() if form is not None else None
                matrix = _matrix(form.get("/Matrix")) if form is not None else None
            except (AttributeError, TypeError, KeyError, ValueError):
                matrix = None
        placed = mult(cm, parent)
        self.forms.append((mult(matrix, placed) if matrix else placed, False))

    def on_after(self, op: Any, args: Any, cm: Any, tm: Any) -> None:
        if op == b"Do" and self.forms:
            self.forms.pop()

    def on_text(self, text: Any, cm: Any, tm: Any, font_dict: Any, size: Any) -> None:
        if not isinstance(text, str) or not text.strip() or self.content.truncated:
            return
        try:
            m = mult(tm, self._ctm(cm))
            scale = math.hypot(m[2], m[3]) or 1.0
            rendered = abs(float(size)) * scale
        except (TypeError, ValueError, IndexError):
            return
        if not math.isfinite(rendered) or rendered <= 0:
            return
        name, bold, mono = self._font(font_dict)
        x, y = float(m[4]), float(m[5])
        text = plain(text)
        for i, raw in enumerate(text.split("\n")):
            piece = raw.rstrip()
            if not piece.strip():
                continue
            if self.content.chars + len(piece) > self.max_chars:
                self.content.truncated = True
                return
            self.content.chars += len(piece)
            ly = y - i * rendered * 1.2
            width = self.widths.width(font_dict, piece, abs(float(size))) * scale
            self.content.runs.append(Run(piece, x, x + width, ly, rendered, name, bold, mono))

    def _font(self, font_dict: Any) -> tuple[str, bool, bool]:
        key = id(font_dict)
        hit = self.fonts.get(key)
        if hit is None:
            name = font_name(font_dict)
            hit = (name, is_bold(name), is_mono(name))
            self.fonts[key] = hit
        return hit

    def on_op(self, op: Any, args: Any, cm: Any, tm: Any) -> None:
        if self.forms and not self.forms[-1][1]:
            self.forms[-1] = (self.forms[-1][0], True)
        if op in (b"re", b"m", b"l", b"Do"):
            try:
                cm = self._ctm(cm)
            except (TypeError, ValueError, IndexError):
                return
        if op == b"re":
            self._rect(args, cm)
        elif op == b"m":
            self.point = self._xy(args, cm)
        elif op == b"l":
            end = self._xy(args, cm)
            if self.point is not None and end is not None:
                self._segment(*self.point, *end)
            self.point = end
        elif op == b"Do" and args:
            with contextlib.suppress(TypeError, IndexError):
                self.content.draws.setdefault(str(args[0]), (cm[4], cm[5], cm[0], cm[3]))
            self._enter_form(args[0], cm)

    def _xy(self, args: Any, cm: Any) -> tuple[float, float] | None:
        try:
            return _apply(cm, float(args[0]), float(args[1]))
        except (TypeError, ValueError, IndexError):
            return None

    def _rect(self, args: Any, cm: Any) -> None:
        try:
            x, y, w, h = (float(a) for a in args[:4])
        except (TypeError, ValueError):
            return
        x0, y0 = _apply(cm, x, y)
        x1, y1 = _apply(cm, x + w, y + h)
        x0, x1 = sorted((x0, x1))
        y0, y1 = sorted((y0, y1))
        if y1 - y0 < 2.5:
            self._segment(x0, (y0 + y1) / 2, x1, (y0 + y1) / 2)
        elif x1 - x0 < 2.5:
            self._segment((x0 + x1) / 2, y0, (x0 + x1) / 2, y1)
        else:
            for seg in ((x0, y0, x1, y0), (x0, y1, x1, y1), (x0, y0, x0, y1), (x1, y0, x1, y1)):
                self._segment(*seg)

    def _segment(self, x0: float, y0: float, x1: float, y1: float) -> None:
        if len(self.content.segments) >= MAX_SEGMENTS:
            return
        if abs(y1 - y0) < 1.0 and abs(x1 - x0) >= 4.0:
            self.content.segments.append(Segment(min(x0, x1), y0, max(x0, x1), y0))
        elif abs(x1 - x0) < 1.0 and abs(y1 - y0) >= 4.0:
            self.content.segments.append(Segment(x0, min(y0, y1), x0, max(y0, y1)))


def collect_page(page: PageObject, max_chars: int) -> PageContent:
    """Run pypdf's text extraction over `page` with our visitors; returns what they saw."""
    resources = page.get("/Resources")
    resources = resources.get_object() if resources is not None else None
    xobjects = resources.get("/XObject") if isinstance(resources, dict) else None
    collector = _Collector(max_chars, xobjects)
    page.extract_text(
        visitor_text=collector.on_text,
        visitor_operand_before=collector.on_op,
        visitor_operand_after=collector.on_after,
    )
    return collector.content
