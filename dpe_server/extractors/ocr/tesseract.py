"""Tesseract (Apache-2.0; Debian `tesseract-ocr` and its `tesseract-ocr-LANG` packages,
Homebrew `tesseract`): its library loaded in the process, started once a process
(`tess_library`, its own C interface), where it is found; else its command, one process a
run (`tess_command`). Both give the same words for the same pixels: the library answers the
command's arguments with the command's output. A picture is read with one thread
(`OMP_THREAD_LIMIT=1`: the server runs one worker process per core), under the worker's own
limits:

1. its skew, whether it lies on its side and where its ink lies are measured on one reduced
   copy (`deskew.survey`; a blank picture is not handed to Tesseract at all); then the ink's
   area alone (`prepare.level`: the blank rest of a page costs nothing) is cleaned of
   speckles when its strokes are thick (`prepare.thick`: a scan, a photo; a 3 × 3 median
   filter: a scan's dust costs Tesseract words; its strokes survive it, where a screenshot's
   one-pixel strokes would not), turned level, and its ruled lines painted out
   (`prepare.unruled`: Tesseract reads a table's rules as `|`, or skips boxed text);
2. unless its lines run up and down, it is recognised (as TSV: every word with its block,
   paragraph and line; `--psm 3`, Tesseract's own page layout, or `--psm 6`, one block of
   lines, for a page of `plain` text: no columns, cells nor pictures) in the
   Latin-script languages asked for (English alone when none were asked for: each language
   more costs a recognition pass; `--ocr-languages` names others), within its ink's bounds
   (`MARGIN` around them), without Tesseract's inverted second reading (`NO_INVERT`);
3. when that reads little (fewer than `MIN_CHARS` characters, or a mean confidence under
   `GOOD_CONFIDENCE`: the page is on its side, upside down, or in another script), Tesseract's
   orientation and script detection (`--psm 0`, the `osd` data) runs: a picture on its side or
   upside down is turned upright (and deskewed again), and recognised again in the languages
   of the script found (Han, Arabic, Hangul…) among those asked for (by default the script's
   first installed language: `eng` for Latin, `chi_sim` for Han; `--ocr-languages zh` reads
   Traditional too; a script none of them reads is Latin); the better of the two readings is
   kept.

The words of a line become one `Word` (joined by one space, none between two Chinese or
Japanese characters), split where a gap wider than `CELL_GAP` line heights parts it (the cells
of a table stay apart for the layout), each as tall as its whole line (Tesseract's word boxes
hug their ink: `120` is a digit's height, `Bolts` an ascender's; a line's, as RapidOCR's
boxes, holds its ascenders and descenders, which the layout's sizes assume: a table's rows
read as a table's, not as paragraphs apart).

Words below `MIN_CONFIDENCE` (of 100) are dropped, and marks that hold no letter nor digit
below `MIN_MARK_CONFIDENCE` (a speck read as a dash).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from dpe_server.extractors.ocr import deskew, prepare, tess_command, tess_library
from dpe_server.extractors.ocr.words import Word

MIN_CONFIDENCE = 10.0
MIN_CHARS = 20
GOOD_CONFIDENCE = 0.75
"""A first reading with fewer characters, or a lower mean confidence, is tried again after
orientation and script detection."""
MIN_MARK_CONFIDENCE = 60.0
CELL_GAP = 1.5
MARGIN = 0.02
"""Of the picture's long side, kept blank around its ink for Tesseract."""
NO_INVERT = ("-c", "tessedit_do_invert=0")
"""Tesseract 5 reads every line of low confidence a second time inverted (light text on
dark): a quarter of its time on a scanned page, for what a scan of paper does not hold."""
PSM_AUTO, PSM_BLOCK = "3", "6"
"""Tesseract's page layouts: its own (`--psm 3`: blocks, columns, pictures found), and one
block of lines (`--psm 6`), which a page of `plain` text is read as: its own layout spent a
tenth of Tesseract's time on an A4 page (426 M of its 3,836 M instructions) finding columns,
tab stops, rules and pictures that are not there."""
GUTTER = 0.01
MIN_GUTTER = 8
TALL = 0.05
BLANK = 0.01
TIMEOUT = 120.0
"""Seconds one reading may take (the job's own deadline is usually shorter)."""
SCRIPTS = {
    "Han": ("chi_sim", "chi_tra"),
    "HanS": ("chi_sim",),
    "HanT": ("chi_tra",),
    "Japanese": ("jpn",),
    "Katakana": ("jpn",),
    "Hiragana": ("jpn",),
    "Hangul": ("kor",),
    "Korean": ("kor",),
    "Arabic": ("ara", "fas", "urd"),
    "Cyrillic": ("rus", "ukr", "bul", "srp"),
}
"""The languages of each script OSD names (a language of none of them is Latin)."""
_NON_LATIN = {name for names in SCRIPTS.values() for name in names}
_CJK = re.compile(r"[\u3000-\u30ff\u3400-\u9fff\uf900-\ufaff\uff00-\uffef]")


@dataclass(frozen=True, slots=True)
class Found:
    words: list[Word]
    size: tuple[int, int]
    rotated: int
    skew: float


def recognise(
    image: Any,
    languages: Sequence[str],
    dpi: int = 0,
    *,
    asked: bool = False,
    thick: bool | None = None,
    size: tuple[int, int] | None = None,
) -> Found:
    """Read a PIL image (see the module); `languages` are Tesseract's names, `asked`: given by
    the user (else every installed one); `thick`: `prepare.thick` of the whole picture when
    known (else told from its ink's area); `size`: the size to read it at, when smaller (the
    words' boxes in its pixels): only the ink's area is reduced to it (`prepare.scaled`)."""
    grey = image.convert("L")
    size = size or grey.size
    dpi = dpi or 300
    latin = _languages(languages, "Latin", asked)
    seen = deskew.survey(grey, page=size)
    if seen.ink is None:  # blank: nothing for Tesseract to read
        return Found([], size, 0, 0.0)
    angle = seen.angle
    page = prepare.level(grey, 0.0 if seen.sideways else angle, seen.ink, thick, size)
    first = Found([], page.size, 0, angle)
    if not seen.sideways:
        first = Found(_read(page, latin, dpi), page.size, 0, angle)
        if _good(first.words):
            return first
    rotate, script = orientation(page.image, dpi)
    langs = _languages(languages, script, asked)
    if not rotate and langs == latin and not seen.sideways:
        return first  # read so already
    if rotate:  # Tesseract's `Rotate`: degrees clockwise
        grey = grey.rotate(-rotate, expand=True)
        size = size if rotate == 180 else (size[1], size[0])
        turned = deskew.survey(grey, sideways=False, page=size)
        angle = turned.angle
        page = prepare.level(grey, angle, turned.ink or (0, 0, *size), thick, size)
    elif seen.sideways and angle:
        page = prepare.level(grey, angle, seen.ink, thick, size)
    second = Found(_read(page, langs, dpi), page.size, rotate, angle)
    return second if _score(second.words) >= _score(first.words) else first


def _languages(languages: Sequence[str], script: str, asked: bool) -> list[str]:
    """The languages to read a page of `script` in: those of its script asked for (by default
    the script's first installed language alone: English for Latin, Simplified Chinese for
    Han, each language more costing Tesseract another pass); a script none of them reads is
    read as Latin."""
    if script in SCRIPTS and not any(lang in SCRIPTS[script] for lang in languages):
        script = "Latin"
    langs = for_script(languages, script)
    first = SCRIPTS[script][0] if script in SCRIPTS else "eng"
    if not asked and first in langs:
        return [first]
    return langs


def _read(page: prepare.Level, langs: Sequence[str], dpi: int) -> list[Word]:
    """The words of the page's prepared area, read within its ink's bounds (`MARGIN` around
    them: Tesseract's page layout costs by the pixel, the blank ones too), in the pixels of
    the whole page turned level."""
    grey = page.image
    ink = grey.point(lambda v: 255 if v < 128 else 0)
    box = ink.getbbox()
    if box is None:
        return []
    psm = PSM_BLOCK if plain(ink.crop(box), max(page.size)) else PSM_AUTO
    args = ["-l", "+".join(langs), "--psm", psm, "--dpi", str(dpi), *NO_INVERT, "tsv"]
    margin = round(MARGIN * max(page.size))
    left, top = max(0, box[0] - margin), max(0, box[1] - margin)
    box = (left, top, min(grey.width, box[2] + margin), min(grey.height, box[3] + margin))
    found = words(_run(args, grey.crop(box)))
    left, top = left + page.offset[0], top + page.offset[1]
    if not left and not top:
        return found
    return [
        Word(w.text, w.x0 + left, w.y0 + top, w.x1 + left, w.y1 + top, w.confidence) for w in found
    ]


def plain(ink: Any, side: int) -> bool:
    """Whether the ink (white on black, cropped to its bounds) of a page whose long side is
    `side` pixels is one plain block of lines of text: no band `GUTTER` of `side` wide (and
    `MIN_GUTTER` pixels) is blank down its whole height (two columns, a table's cells; a word
    gap is narrower, and a line longer than the others leaves none beyond their ends: its own
    letters stand closer), and no band `TALL` of `side` high is inked across (a picture, a
    drawing, a logo: a line of text is lower). A column or row counts as blank with under
    `BLANK` of its pixels inked (a speck is not ink)."""
    from PIL import Image

    blank = BLANK * 255
    across = ink.resize((ink.width, 1), Image.Resampling.BOX).tobytes()
    down = ink.resize((1, ink.height), Image.Resampling.BOX).tobytes()
    return _longest(across, lambda v: v <= blank) < max(MIN_GUTTER, GUTTER * side) and (
        _longest(down, lambda v: v > blank) < TALL * side
    )


def _longest(values: Iterable[float], counts: Callable[[float], bool]) -> int:
    """The longest run of `values` that `counts`."""
    longest = run = 0
    for value in values:
        run = run + 1 if counts(value) else 0
        longest = max(longest, run)
    return longest


def _score(found: Sequence[Word]) -> float:
    """Confident characters read."""
    return sum(len(w.text) * w.confidence for w in found)


def _good(found: Sequence[Word]) -> bool:
    chars = sum(len(w.text) for w in found)
    return chars >= MIN_CHARS and _score(found) / chars >= GOOD_CONFIDENCE


def for_script(languages: Sequence[str], script: str) -> list[str]:
    """The languages to read a page of `script` in (see the module)."""
    if script in SCRIPTS:
        found = [lang for lang in languages if lang in SCRIPTS[script]]
    else:
        found = [lang for lang in languages if lang not in _NON_LATIN]
    return found or list(languages) or ["eng"]


def orientation(grey: Any, dpi: int) -> tuple[int, str]:
    """Tesseract's orientation and script detection: (degrees to turn clockwise, script);
    (0, "") when it cannot tell (too little text) or has no `osd` data."""
    try:
        out = _run(
            ["--psm", "0", "-l", "osd", "--dpi", str(dpi), "-c", "min_characters_to_try=20"], grey
        )
    except RuntimeError:
        return 0, ""
    rotate = re.search(r"^Rotate:\s*(\d+)", out, re.MULTILINE)
    script = re.search(r"^Script:\s*(\w+)", out, re.MULTILINE)
    confidence = re.search(r"^Orientation confidence:\s*([\d.]+)", out, re.MULTILINE)
    degrees = int(rotate.group(1)) if rotate else 0
    if confidence is None or float(confidence.group(1)) < 1.0:
        degrees = 0
    return degrees % 360, script.group(1) if script else ""


def words(tsv: str) -> list[Word]:
    """Tesseract's TSV → one `Word` per stretch of a line (see the module)."""
    lines: dict[tuple[str, ...], list[tuple[str, float, float, float, float, float]]] = {}
    for row in tsv.splitlines()[1:]:
        cells = row.split("\t")
        if len(cells) < 12 or cells[0] != "5":
            continue
        text = cells[11].strip()
        try:
            left, top, width, height = (float(v) for v in cells[6:10])
            conf = float(cells[10])
        except ValueError:
            continue
        if not text or conf < MIN_CONFIDENCE:
            continue
        if conf < MIN_MARK_CONFIDENCE and not any(c.isalnum() for c in text):
            continue
        key = tuple(cells[1:5])
        lines.setdefault(key, []).append((text, left, top, left + width, top + height, conf))
    out: list[Word] = []
    for items in lines.values():
        tall = sorted(i[4] - i[2] for i in items)[len(items) // 2]
        top, bottom = min(i[2] for i in items), max(i[4] for i in items)
        stretch = [items[0]]
        for item in items[1:]:
            if item[1] - stretch[-1][3] > CELL_GAP * max(tall, 1.0):
                out.append(_joined(stretch, top, bottom))
                stretch = []
            stretch.append(item)
        out.append(_joined(stretch, top, bottom))
    return out


def _joined(
    items: list[tuple[str, float, float, float, float, float]], top: float, bottom: float
) -> Word:
    text = items[0][0]
    for before, item in itertools.pairwise(items):
        cjk = _CJK.match(before[0][-1]) and _CJK.match(item[0][0])
        text += ("" if cjk else " ") + item[0]
    confidence = sum(i[5] for i in items) / len(items) / 100
    left, right = min(i[1] for i in items), max(i[3] for i in items)
    return Word(text, left, top, right, bottom, round(confidence, 3))


def _run(args: list[str], grey: Any) -> str:
    """What the command prints for `args` on the picture: answered by Tesseract's library
    loaded in the process (`tess_library`: started once a process, not once a page), else by
    the command (`tess_command`). `RuntimeError` when it fails, `EngineExhausted` when it ran
    out of memory."""
    printed = tess_library.run(args, grey, TIMEOUT)
    return tess_command.run(args, grey, TIMEOUT) if printed is None else printed
