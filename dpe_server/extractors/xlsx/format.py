"""Cell values as display strings, the way Excel shows them (SPEC §4: cells are strings).

Integers without `.0`, dates and times in ISO 8601, percentages and fixed decimals per the
cell's number format, booleans `TRUE` / `FALSE`. The number format of a cell comes from
styles.xml (`numFmts` + `cellXfs`), read by `Styles`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from dpe_server.extractors.kit.package import Package
from dpe_server.extractors.xlsx.book import Workbook, kid, kids, workbook_target

BUILTIN_FORMATS: dict[int, str] = {
    0: "General",
    1: "0",
    2: "0.00",
    3: "#,##0",
    4: "#,##0.00",
    9: "0%",
    10: "0.00%",
    11: "0.00E+00",
    12: "# ?/?",
    13: "# ??/??",
    14: "yyyy-mm-dd",
    15: "d-mmm-yy",
    16: "d-mmm",
    17: "mmm-yy",
    18: "h:mm AM/PM",
    19: "h:mm:ss AM/PM",
    20: "h:mm",
    21: "h:mm:ss",
    22: "yyyy-mm-dd h:mm",
    37: "#,##0 ;(#,##0)",
    38: "#,##0 ;[Red](#,##0)",
    39: "#,##0.00;(#,##0.00)",
    40: "#,##0.00;[Red](#,##0.00)",
    45: "mm:ss",
    46: "[h]:mm:ss",
    47: "mmss.0",
    48: "##0.0E+0",
    49: "@",
}
# Locale-dependent built-in date formats (27-36, 50-58 in East Asian Excel).
for _i in (*range(27, 37), *range(50, 59)):
    BUILTIN_FORMATS[_i] = "yyyy-mm-dd"

_QUOTED = re.compile(r'"[^"]*"|\\.|\[[^\]]*\]|_.|\*.')
_DATE_CHARS = re.compile(r"[dmyhse]", re.IGNORECASE)


def _bare(code: str) -> str:
    """The first section of a format with quoted text, escapes and [brackets] removed."""
    return _QUOTED.sub("", code.split(";", maxsplit=1)[0])


def format_kind(code: str) -> str:
    """general, text, date, time, datetime, percent, scientific or number."""
    if code in ("General", ""):
        return "general"
    if code == "@":
        return "text"
    bare = _bare(code)
    if "%" in bare:
        return "percent"
    if "E+" in bare.upper() or "E-" in bare.upper():
        return "scientific"
    if _DATE_CHARS.search(bare.replace("General", "")) and not re.search(r"[0#?]", bare):
        has_date = bool(re.search(r"[dy]", bare, re.IGNORECASE)) or (
            "m" in bare.lower() and not re.search(r"[hs]", bare, re.IGNORECASE)
        )
        has_time = bool(re.search(r"[hs]", bare, re.IGNORECASE))
        if has_date and has_time:
            return "datetime"
        return "date" if has_date else "time"
    if re.search(r"[0#?]", bare):
        return "number"
    return "general"


@dataclass(frozen=True, slots=True)
class NumberFormat:
    code: str
    kind: str
    decimals: int
    thousands: bool
    prefix: str
    suffix: str

    @classmethod
    def parse(cls, code: str) -> NumberFormat:
        kind = format_kind(code)
        first = code.split(";", maxsplit=1)[0]
        bare = _bare(first)
        m = re.search(r"\.([0#?]+)", bare)
        decimals = len(m.group(1)) if m else 0
        thousands = bool(re.search(r"[0#?],[0#?]", bare))
        prefix = suffix = ""
        if kind == "number":
            lit = re.sub(r"\[\$([^\]-]*)[^\]]*\]", r'"\1"', first)
            head = re.match(r'^((?:"[^"]*"|[$€£¥ ])*)', lit)
            tail = re.search(r'((?:"[^"]*"|[$€£¥ ])*)$', lit)
            prefix = (head.group(1) if head else "").replace('"', "")
            suffix = (tail.group(1) if tail else "").replace('"', "")
        return cls(code, kind, decimals, thousands, prefix, suffix)


GENERAL = NumberFormat("General", "general", 0, False, "", "")


class Styles:
    """Number format and font facts per cell style index (`s` attribute of a cell)."""

    def __init__(self, formats: list[NumberFormat], bold: list[bool], big: list[bool]) -> None:
        self.formats = formats
        self.bold = bold
        self.big = big
        """True where the style's font is larger than the workbook's default font."""

    def format(self, xf: int) -> NumberFormat:
        return self.formats[xf] if 0 <= xf < len(self.formats) else GENERAL

    def emphasised(self, xf: int) -> bool:
        """Bold or larger than normal: what a title row looks like."""
        return 0 <= xf < len(self.bold) and (self.bold[xf] or self.big[xf])

    def any_emphasised(self) -> bool:
        """Whether any style is `emphasised`: else no cell's style makes it a title."""
        return any(self.bold) or any(self.big)

    def special(self) -> set[int]:
        """Style indices whose numbers calamine does not show as Excel does (not General,
        text or a date): percent, fixed decimals, scientific."""
        return {
            i for i, f in enumerate(self.formats) if f.kind in ("percent", "number", "scientific")
        }

    @classmethod
    def read(cls, pkg: Package, wb: Workbook) -> Styles:
        part = workbook_target(wb, "styles")
        root = pkg.xml(part) if part and pkg.has(part) else None
        if root is None:
            return cls([], [], [])
        codes = dict(BUILTIN_FORMATS)
        for nf in kids(kid(root, "numFmts"), "numFmt"):
            try:
                codes[int(nf.get("numFmtId", "-1"))] = nf.get("formatCode", "General")
            except ValueError:
                continue
        fonts = kids(kid(root, "fonts"), "font")
        sizes = [_font_size(f) for f in fonts]
        base = sizes[0] if sizes else 11.0
        font_bold = [_font_bold(f) for f in fonts]
        parsed: dict[int, NumberFormat] = {}
        formats: list[NumberFormat] = []
        bold: list[bool] = []
        big: list[bool] = []
        for xf in kids(kid(root, "cellXfs"), "xf"):
            num = _int(xf.get("numFmtId"), 0)
            if num not in parsed:
                parsed[num] = NumberFormat.parse(codes.get(num, "General"))
            formats.append(parsed[num])
            font = _int(xf.get("fontId"), 0)
            bold.append(0 <= font < len(fonts) and font_bold[font])
            big.append(0 <= font < len(fonts) and sizes[font] > base + 0.5)
        return cls(formats, bold, big)


def _int(value: str | None, default: int) -> int:
    try:
        return int(value) if value is not None else default
    except ValueError:
        return default


def _font_size(font: object) -> float:
    sz = kid(font, "sz")  # type: ignore[arg-type]
    try:
        return float(sz.get("val", "11")) if sz is not None else 11.0
    except ValueError:
        return 11.0


def _font_bold(font: object) -> bool:
    b = kid(font, "b")  # type: ignore[arg-type]
    return b is not None and b.get("val", "1").lower() not in ("0", "false")


# --- values to display strings ----------------------------------------------------------------

CELL_MAX_CHARS = 32_767
"""Excel's own limit on a cell's text; longer text (only a crafted file has it) is cut."""


def clip(text: str) -> str:
    return text if len(text) <= CELL_MAX_CHARS else text[: CELL_MAX_CHARS - 1] + "…"


_EPOCH_1900 = datetime(1899, 12, 30)
_EPOCH_1904 = datetime(1904, 1, 1)


def general(v: float) -> str:
    """A number as Excel's General format shows it (integers without `.0`)."""
    if v.is_integer() and -1e15 < v < 1e15:
        return str(int(v))
    return f"{v:.15g}"


def serial_to_datetime(v: float, date1904: bool = False) -> datetime | None:
    try:
        base = _EPOCH_1904 if date1904 else _EPOCH_1900
        return base + timedelta(days=v)
    except (OverflowError, ValueError):
        return None


def show_datetime(value: datetime, kind: str) -> str:
    if value.microsecond:
        value = (value + timedelta(microseconds=500_000)).replace(microsecond=0)
    if kind == "date" or (kind != "time" and value.time() == time(0)):
        return value.date().isoformat()
    if kind == "time":
        return value.time().isoformat()
    return value.isoformat()


def show_number(v: float, fmt: NumberFormat, date1904: bool = False) -> str:
    """A number under a number format."""
    kind = fmt.kind
    if kind == "percent":
        return f"{v * 100:.{fmt.decimals}f}%"
    if kind == "number":
        body = f"{v:,.{fmt.decimals}f}" if fmt.thousands else f"{v:.{fmt.decimals}f}"
        return f"{fmt.prefix}{body}{fmt.suffix}".strip()
    if kind == "scientific":
        return f"{v:.{fmt.decimals}E}"
    if kind in ("date", "time", "datetime"):
        dt = serial_to_datetime(v, date1904)
        return general(v) if dt is None else show_datetime(dt, kind)
    return general(v)


def show(value: object) -> str:
    """A calamine value as a display string, for a cell without a special number format."""
    if isinstance(value, str):
        return clip(value)
    if isinstance(value, float):
        return general(value)
    if value is True:
        return "TRUE"
    if value is False:
        return "FALSE"
    if isinstance(value, datetime):
        return show_datetime(value, "datetime")
    if isinstance(value, date | time):
        return value.isoformat()
    if isinstance(value, timedelta):
        total = int(value.total_seconds())
        sign = "-" if total < 0 else ""
        h, rest = divmod(abs(total), 3600)
        return f"{sign}{h}:{rest // 60:02d}:{rest % 60:02d}"
    return str(value)
