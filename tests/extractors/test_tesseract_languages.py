"""Which of Tesseract's languages a page is read in (extractors/ocr/tesseract.py): by default
one language of the page's script (each language more is another recognition pass), and a page
read once where a second reading would read it the same way. The command is replaced by a fake
that records its arguments, so these run without Tesseract."""

from __future__ import annotations

from typing import Any

import pytest

from dpe_server.extractors.ocr import tesseract
from fixtures.builders import scanned

INSTALLED = ("ara", "chi_sim", "chi_tra", "deu", "eng", "fra", "jpn", "kor", "spa")
HEADER = (
    "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext"
)


def _osd(rotate: int, script: str) -> str:
    return (
        f"Page number: 0\nOrientation in degrees: {(360 - rotate) % 360}\nRotate: {rotate}\n"
        f"Orientation confidence: 5.00\nScript: {script}\nScript confidence: 3.00\n"
    )


def _fake(monkeypatch: pytest.MonkeyPatch, osd: str) -> list[list[str]]:
    """Replace the command: OSD answers `osd`, a reading finds no word; the runs' arguments."""
    runs: list[list[str]] = []

    def run(args: list[str], grey: Any) -> str:
        runs.append(args)
        return osd if "osd" in args else HEADER + "\n"

    monkeypatch.setattr(tesseract, "_run", run)
    return runs


def _readings(runs: list[list[str]]) -> list[str]:
    return [args[args.index("-l") + 1] for args in runs if "osd" not in args]


def test_a_page_on_its_side_in_latin_script_is_read_in_english_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    runs = _fake(monkeypatch, _osd(90, "Latin"))
    page = scanned.clean_page(scanned.EN_TITLE, scanned.EN_TEXT, False).rotate(90, expand=True)
    found = tesseract.recognise(page, INSTALLED, 200)
    assert found.rotated == 90
    # one reading, English alone (not every Latin-script language installed: four passes)
    assert _readings(runs) == ["eng"]


def test_a_script_no_language_reads_is_not_read_again_in_every_language(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    runs = _fake(monkeypatch, _osd(0, "Cyrillic"))
    page = scanned.clean_page(scanned.EN_TITLE, scanned.EN_TEXT, False)
    tesseract.recognise(page, INSTALLED, 200)
    # the English reading, then OSD; no Cyrillic language is installed: nothing to read again
    assert _readings(runs) == ["eng"]


def test_asked_languages_of_the_script_are_all_read(monkeypatch: pytest.MonkeyPatch) -> None:
    runs = _fake(monkeypatch, _osd(0, "Han"))
    page = scanned.clean_page(scanned.EN_TITLE, scanned.EN_TEXT, False)
    tesseract.recognise(page, ("eng", "chi_sim", "chi_tra"), 200, asked=True)
    assert _readings(runs) == ["eng", "chi_sim+chi_tra"]
