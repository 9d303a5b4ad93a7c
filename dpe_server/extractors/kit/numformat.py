"""A list counter written in a `w:numFmt` (ECMA-376 §17.18.59), as Word shows it.

Decimal and its variants, roman numerals, Word's letters (a…z, aa…zz: the letter repeated),
ordinals, CJK counting numerals (一, 十一, 二十, 一百零五), the ten heavenly stems and the
twelve earthly branches. Formats not listed here are written in decimal.
"""

from __future__ import annotations

UNORDERED = frozenset({"bullet", "none"})
"""The formats that do not count (every other format is an ordered list)."""

_ROMAN = (
    (1000, "m"),
    (900, "cm"),
    (500, "d"),
    (400, "cd"),
    (100, "c"),
    (90, "xc"),
    (50, "l"),
    (40, "xl"),
    (10, "x"),
    (9, "ix"),
    (5, "v"),
    (4, "iv"),
    (1, "i"),
)
_CJK_DIGITS = "零一二三四五六七八九"
_CJK_UNITS = ((1000, "千"), (100, "百"), (10, "十"))
_CJK_COUNTING = frozenset(
    {
        "chineseCounting",
        "chineseCountingThousand",
        "japaneseCounting",
        "taiwaneseCounting",
        "koreanCounting",
        "ideographLegalTraditional",
    }
)
_STEMS = "甲乙丙丁戊己庚辛壬癸"
_BRANCHES = "子丑寅卯辰巳午未申酉戌亥"
_FULL_WIDTH = str.maketrans("0123456789", "０１２３４５６７８９")


def roman(n: int) -> str:
    """Lower-case roman numeral of 1..3999 (decimal outside that range)."""
    if not 0 < n < 4000:
        return str(n)
    out = []
    for value, letters in _ROMAN:
        count, n = divmod(n, value)
        out.append(letters * count)
    return "".join(out)


def letters(n: int) -> str:
    """Word's lower-case letters: a…z, then aa…zz, aaa… (decimal below 1)."""
    if n < 1:
        return str(n)
    return chr(ord("a") + (n - 1) % 26) * ((n - 1) // 26 + 1)


def cjk_counting(n: int) -> str:
    """Chinese counting numerals: 一, 十, 十一, 二十一, 一百零五 (decimal outside 1..9999)."""
    if not 0 < n < 10000:
        return str(n)
    out = []
    zero = False
    for value, unit in _CJK_UNITS:
        digit, n = divmod(n, value)
        if digit:
            if zero:
                out.append(_CJK_DIGITS[0])
            first_ten = value == 10 and not out and digit == 1
            out.append(("" if first_ten else _CJK_DIGITS[digit]) + unit)
            zero = False
        elif out:
            zero = True
    if n:
        if zero:
            out.append(_CJK_DIGITS[0])
        out.append(_CJK_DIGITS[n])
    return "".join(out)


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def number(n: int, fmt: str) -> str:
    """The counter `n` written in the numbering format `fmt`."""
    match fmt:
        case "lowerRoman":
            return roman(n)
        case "upperRoman":
            return roman(n).upper()
        case "lowerLetter":
            return letters(n)
        case "upperLetter":
            return letters(n).upper()
        case "decimalZero":
            return f"{n:02d}"
        case "ordinal":
            return ordinal(n)
        case "decimalFullWidth" | "decimalFullWidth2":
            return str(n).translate(_FULL_WIDTH)
        case "decimalEnclosedCircle" | "decimalEnclosedCircleChinese" if 1 <= n <= 20:
            return chr(0x2460 + n - 1)
        case "ideographTraditional" if 1 <= n <= len(_STEMS):
            return _STEMS[n - 1]
        case "ideographZodiac" if 1 <= n <= len(_BRANCHES):
            return _BRANCHES[n - 1]
        case _ if fmt in _CJK_COUNTING:
            return cjk_counting(n)
        case _:
            return str(n)
