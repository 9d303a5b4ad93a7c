"""How a scanned page is made ready for Tesseract (extractors/ocr/prepare.py, deskew.survey): only
the area of its ink is filtered and turned level, to the pixels the whole page turned would
hold there, and a blank page is not handed to Tesseract at all. The command is replaced by a
fake that records the pictures it is given, so these run without Tesseract."""

from __future__ import annotations

import random
from typing import Any

import pytest
from PIL import Image, ImageChops, ImageFilter

from dpe_server.extractors.ocr import deskew, prepare, tesseract
from dpe_server.extractors.ocr import engine as ocr_engine
from fixtures.builders import scanned

HEADER = (
    "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext"
)


def _skewed_page() -> Image.Image:
    """The English page scanned skewed 3° (speckled, blurred): a letter page at 200 dpi."""
    return scanned._scan(scanned.clean_page(scanned.EN_TITLE, scanned.EN_TEXT, False), 5, 3.0)


def _fake(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """Replace the command (a reading finds no word); the sizes of the pictures it is given."""
    given: list[tuple[int, int]] = []

    def run(args: list[str], grey: Any) -> str:
        given.append(grey.size)
        return "" if "osd" in args else HEADER + "\n"

    monkeypatch.setattr(tesseract, "_run", run)
    return given


def test_only_the_ink_area_is_filtered_and_turned(monkeypatch: pytest.MonkeyPatch) -> None:
    page = _skewed_page().convert("L")
    worked: list[int] = []
    for name in ("filter", "rotate", "transform"):
        method = getattr(Image.Image, name)

        def record(self: Image.Image, *args: Any, _method: Any = method, **kw: Any) -> Any:
            worked.append(self.width * self.height)
            return _method(self, *args, **kw)

        monkeypatch.setattr(Image.Image, name, record)
    _fake(monkeypatch)
    tesseract.recognise(page, ["eng"], 200)
    # the median filter and the rotation worked on the title and 11 lines' area alone (the
    # whole page was filtered, then turned, before: 4 million pixels each)
    assert worked
    assert max(worked) < page.width * page.height / 3, worked


def test_the_ink_area_turned_holds_the_pixels_of_the_whole_page_turned() -> None:
    page = _skewed_page().convert("L")
    seen = deskew.survey(page)
    assert seen.angle == -3.0
    assert not seen.sideways
    assert seen.ink is not None
    level = prepare.level(page, seen.angle, seen.ink, filtered=False)
    whole = page.rotate(seen.angle, resample=Image.Resampling.BICUBIC, expand=True, fillcolor=255)
    assert level.size == whole.size
    left, top = level.offset
    window = whole.crop((left, top, left + level.image.width, top + level.image.height))
    # the same pixels, but in the window's corners beyond the area turned (left white)
    inner = (120, 120, level.image.width - 120, level.image.height - 120)
    assert ImageChops.difference(window.crop(inner), level.image.crop(inner)).getbbox() is None
    # and it holds all of the page's ink (its speckles aside)
    ink = whole.filter(ImageFilter.MedianFilter(3)).point(lambda v: 255 if v < 100 else 0)
    inside = Image.new("L", whole.size, 0)
    inside.paste(255, (left, top, left + level.image.width, top + level.image.height))
    assert ImageChops.subtract(ink, inside).getbbox() is None


def test_a_blank_page_is_not_handed_to_tesseract(monkeypatch: pytest.MonkeyPatch) -> None:
    given = _fake(monkeypatch)
    blank = Image.new("L", (1700, 2200), 255)  # a white page: a picture with no text
    found = tesseract.recognise(blank, ["eng"], 200)
    assert found.words == []
    assert given == []  # not asked its orientation (after an empty reading, before)


def test_a_page_is_read_in_the_pixels_of_the_whole_page(monkeypatch: pytest.MonkeyPatch) -> None:
    page = _skewed_page().convert("L")
    seen = deskew.survey(page)
    assert seen.ink is not None
    level = prepare.level(page, seen.angle, seen.ink, filtered=True)
    row = "5\t1\t1\t1\t1\t1\t10\t20\t100\t30\t96\tHarbour"
    monkeypatch.setattr(tesseract, "_run", lambda args, grey: f"{HEADER}\n{row}\n")
    (word,) = tesseract._read(level, ["eng"], 200)
    box = level.image.point(lambda v: 255 if v < 128 else 0).getbbox()
    assert box is not None
    margin = round(tesseract.MARGIN * max(level.size))
    # the crop Tesseract was given starts at the ink less the whole page's margin
    assert word.x0 == level.offset[0] + max(0, box[0] - margin) + 10
    assert word.y0 == level.offset[1] + max(0, box[1] - margin) + 20


def test_the_median_filter_gives_pillows_pixels_without_its_rank_filter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    page = _skewed_page().convert("L")
    area = page.crop((150, 200, 1250, 900))  # the title and the first lines, speckled
    assert (
        ImageChops.difference(
            prepare.median(area), area.filter(ImageFilter.MedianFilter(3))
        ).getbbox()
        is None
    )
    rng = random.Random(7)
    for size in ((1, 1), (2, 3), (5, 1), (1, 4), (17, 9)):  # the edges repeated as Pillow's
        noise = Image.frombytes(
            "L", size, bytes(rng.randrange(256) for _ in range(size[0] * size[1]))
        )
        expected = noise.filter(ImageFilter.MedianFilter(3))
        assert ImageChops.difference(prepare.median(noise), expected).getbbox() is None, size
    # and the preparation of a thick page filters it so, never by Pillow's median filter (a
    # sort of nine pixels for each: five times the cost, 0.06 CPU-s of an A4 page's area)
    ranked: list[tuple[int, int]] = []
    method = Image.Image.filter

    def record(self: Image.Image, kind: Any, *args: Any, **kw: Any) -> Any:
        if isinstance(kind, ImageFilter.MedianFilter):
            ranked.append(self.size)
        return method(self, kind, *args, **kw)

    seen = deskew.survey(page)
    assert seen.ink is not None
    monkeypatch.setattr(Image.Image, "filter", record)
    level = prepare.level(page, seen.angle, seen.ink, filtered=True)
    assert ranked == []
    assert level.image.size[0] > 1000  # the page's area, filtered and turned


def _layouts(monkeypatch: pytest.MonkeyPatch, page: Image.Image) -> list[str]:
    """The page layouts (`--psm`) Tesseract is asked to read the page with."""
    asked: list[str] = []

    def run(args: list[str], grey: Any) -> str:
        if "tsv" in args:
            asked.append(args[args.index("--psm") + 1])
        return "" if "osd" in args else HEADER + "\n"

    monkeypatch.setattr(tesseract, "_run", run)
    tesseract.recognise(page.convert("L"), ["eng"], 200)
    return asked


def test_a_plain_page_is_read_as_one_block_of_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    # one column of lines, a title above them: Tesseract's column finding is not run on it
    assert _layouts(monkeypatch, _skewed_page()) == [tesseract.PSM_BLOCK]
    photo = scanned.clean_page(scanned.EN_TITLE, scanned.EN_TEXT, False)
    rng = random.Random(5)  # a photo below the lines (a flat dark box is painted out as a rule)
    photo.paste(Image.frombytes("L", (1200, 400), rng.randbytes(1200 * 400)), (200, 1400))
    two = scanned.columns_page()
    table = scanned.price_list_page()
    # two columns, a borderless table's cells, a picture: Tesseract's own page layout
    for page in (photo, two, table):
        assert _layouts(monkeypatch, scanned._scan(page, 3, tilt=3.0)) == [tesseract.PSM_AUTO]


def test_a_large_page_is_reduced_in_its_ink_area_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    clean = scanned.clean_page(scanned.EN_TITLE, scanned.EN_TEXT, False)
    page = scanned._scan(clean.resize((2200, 2847)), 5, tilt=3.0)  # 260 dpi: read at 2400
    given = _fake(monkeypatch)
    row = "5\t1\t1\t1\t1\t1\t10\t20\t100\t30\t96\tHarbour"
    monkeypatch.setattr(tesseract, "_run", lambda args, grey: f"{HEADER}\n{row}\n")
    monkeypatch.setattr(ocr_engine.settings, "chosen", lambda engine: "tesseract")
    monkeypatch.setattr(ocr_engine.settings, "engine_name", lambda engine: "tesseract 5")
    monkeypatch.setattr(ocr_engine.settings, "tesseract_languages", lambda langs: ("eng",))
    reduced: list[tuple[int, int]] = []
    method = Image.Image.resize

    def record(self: Image.Image, size: Any, *args: Any, **kw: Any) -> Any:
        if self.size == page.size:
            reduced.append(tuple(size))
        return method(self, size, *args, **kw)

    monkeypatch.setattr(Image.Image, "resize", record)
    reading = ocr_engine.read(page, "tesseract", (), 260)
    scale = ocr_engine.SMALL_SIDE / max(page.size)
    whole = (round(page.width * scale), round(page.height * scale))
    # the picture reduced to 2400 pixels whole was 0.03 CPU-s of an A4 page: now its ink's
    # area alone is (and the survey's copy of 600 pixels)
    assert whole not in reduced, reduced
    assert reduced
    assert all(w * h < whole[0] * whole[1] / 2 for w, h in reduced), reduced
    # the words are placed in the picture's own pixels (turned level), as before
    assert abs(reading.width - page.width) < page.width / 10
    (word,) = reading.words
    assert word.text == "Harbour"
    assert 0 < word.x0 < word.x1 < reading.width
    assert 0 < word.y0 < word.y1 < reading.height
    assert 120 < word.x1 - word.x0 < 127  # its 100 pixels as read, at 2400 of 2959
    assert given == []


def test_the_survey_finds_the_skew_and_a_page_on_its_side_in_26_rotations(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clean = scanned.clean_page(scanned.EN_TITLE, scanned.EN_TEXT, False)
    skewed = _skewed_page().convert("L")
    side = scanned._scan(clean, 11, tilt=3.0, turn=90).convert("L")
    turns: list[float] = []
    method = Image.Image.rotate

    def record(self: Image.Image, angle: float, *args: Any, **kw: Any) -> Any:
        turns.append(angle)
        return method(self, angle, *args, **kw)

    monkeypatch.setattr(Image.Image, "rotate", record)
    seen = deskew.survey(skewed)
    assert (seen.angle, seen.sideways) == (-3.0, False)
    # every whole degree and the quarters about the best for its rows; for its columns (is it
    # on its side?) the whole degrees alone: 30 rotations of the reduced copy before
    assert len(turns) == 11 + 4 + 11
    turns.clear()
    assert deskew.survey(side).sideways
    assert len(turns) == 11 + 4 + 11
