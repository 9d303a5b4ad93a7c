"""Tesseract loaded in the process (extractors/ocr/tess_library.py): started once a process, not
once a page; the same words as its command for the same pixels; the command where the library
is not found. These need Tesseract (its command, English data; its library for most) and skip,
saying so, without them."""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from dpe_server.extractors.ocr import settings, tess_command, tess_library, tesseract
from fixtures.builders import scanned

ROOT = Path(__file__).resolve().parents[2]
HAS_COMMAND = "eng" in settings.tesseract()[2]


def _has_library() -> bool:
    """Whether the system has Tesseract's library, found without loading it (loaded here, its
    OpenMP would start without the thread limit `tess_library` loads it with)."""
    return ctypes.util.find_library("tesseract") is not None


needs_command = pytest.mark.skipif(
    not HAS_COMMAND, reason="the tesseract command with English data is not installed"
)
needs_library = pytest.mark.skipif(
    not HAS_COMMAND or not _has_library(),
    reason="Tesseract's library (libtesseract.so.5, Debian libtesseract5) is not installed",
)
READ = ["-l", "eng", "--psm", "3", "--dpi", "200", *tesseract.NO_INVERT, "tsv"]
OSD = ["--psm", "0", "-l", "osd", "--dpi", "200", "-c", "min_characters_to_try=20"]

TWO_PAGES = """
import json, os, subprocess, sys
from dpe_server.extractors.ocr import tesseract
from fixtures.builders import scanned

runs = []
real = subprocess.run

def spy(argv, *args, **kwargs):
    if "stdin" in argv:  # a run of the command on a picture: Tesseract started
        runs.append(argv)
    return real(argv, *args, **kwargs)

subprocess.run = spy
threads = len(os.listdir("/proc/self/task"))
words = []
for seed in (1, 2):
    page = scanned.page_image(scanned.EN_TITLE, scanned.EN_TEXT, False, seed)
    words.append(len(tesseract.recognise(page, ["eng"], 200).words))
library = sys.modules.get("dpe_server.extractors.ocr.tess_library")
inits = library.POOL.initialisations if library else 0
print(json.dumps({"starts": len(runs) + inits, "words": words, "threads": threads,
                  "after": len(os.listdir("/proc/self/task"))}))
"""


@pytest.fixture(scope="module")
def two_pages() -> dict[str, Any]:
    """A fresh process (a worker, `dpe-server read`) recognises two English pages: how many
    times Tesseract started (runs of its command, initialisations of its library), the words
    read, its threads before and after."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("OMP_THREAD_LIMIT", None)
    done = subprocess.run(
        [sys.executable, "-c", TWO_PAGES],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        check=True,
        timeout=300,
    )
    found: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return found


@needs_library
def test_a_process_reads_two_pages_with_one_tesseract_start(two_pages: dict[str, Any]) -> None:
    assert min(two_pages["words"]) >= 10  # both pages read
    # the command started Tesseract once a page (2); the library once a process
    assert two_pages["starts"] == 1


@needs_library
def test_the_library_reads_with_one_thread(two_pages: dict[str, Any]) -> None:
    # OpenMP limited as the command was (`OMP_THREAD_LIMIT=1`): no thread of its own kept
    assert two_pages["after"] == two_pages["threads"]


def _sideways() -> Image.Image:
    """The English page scanned, lying on its side: read after orientation detection."""
    page = scanned.page_image(scanned.EN_TITLE, scanned.EN_TEXT, False, 3)
    return page.rotate(90, expand=True)


@needs_library
def test_the_library_is_used_and_reads_the_words_the_command_reads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    page = _sideways()
    with monkeypatch.context() as patch:
        patch.setattr(tess_library, "library", lambda: None)
        by_command = tesseract.recognise(page, ["eng"], 200)

    def no_command(argv: list[str], *args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"the command ran: {argv}")

    monkeypatch.setattr(subprocess, "run", no_command)
    by_library = tesseract.recognise(page, ["eng"], 200)
    assert by_library.rotated == by_command.rotated == 90
    assert scanned.recall_en(" ".join(w.text for w in by_library.words)) >= 0.95
    assert by_library.words == by_command.words


@needs_library
def test_the_library_prints_what_the_command_prints() -> None:
    grey = _sideways().convert("L")
    upright = grey.rotate(-90, expand=True)
    for args, picture in ((OSD, grey), (READ, upright)):
        printed = tess_library.run(args, picture, tesseract.TIMEOUT)
        assert printed is not None
        assert printed == tess_command.run(args, picture, tesseract.TIMEOUT), args
    osd = tess_library.run(OSD, grey, tesseract.TIMEOUT)
    assert osd is not None
    assert "Rotate: 90\n" in osd


@needs_library
def test_leptonica_writes_nothing_to_standard_error(capfd: pytest.CaptureFixture[str]) -> None:
    """A strip cutting a page's lines in half: Tesseract's picture library warns (`Error in
    pixScanForForeground: invalid box`) on the process's standard error, the server's log,
    itself; the command's standard error was dropped (a second reader's finding)."""
    page = scanned.page_image(scanned.EN_TITLE, scanned.EN_TEXT, False, 1).convert("L")
    assert tess_library.run(READ, page.crop((0, 184, page.width, 224)), 10.0) is not None
    assert capfd.readouterr().err == ""


@needs_command
def test_the_command_reads_where_the_library_is_not_found(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(tess_library, "library", lambda: None)
    runs: list[list[str]] = []
    real = subprocess.run

    def counted(argv: list[str], *args: Any, **kwargs: Any) -> Any:
        runs.append(argv)
        return real(argv, *args, **kwargs)

    monkeypatch.setattr(subprocess, "run", counted)
    found = tesseract.recognise(_sideways(), ["eng"], 200)
    assert found.rotated == 90
    assert scanned.recall_en(" ".join(w.text for w in found.words)) >= 0.95
    assert [args[args.index("-l") + 1] for args in runs] == ["osd", "eng"]


@needs_library
def test_a_reading_past_its_deadline_stops_and_the_handle_reads_on() -> None:
    grey = scanned.page_image(scanned.EN_TITLE, scanned.EN_TEXT, False, 4).convert("L")
    whole = tess_library.run(READ, grey, tesseract.TIMEOUT)
    with pytest.raises(RuntimeError, match="ran past"):
        tess_library.run(READ, grey, 0.01)
    assert tess_library.run(READ, grey, tesseract.TIMEOUT) == whole


@needs_library
def test_the_handles_kept_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    installed = settings.tesseract()[2]
    langs = [lang for lang in ("eng", "deu", "fra", "spa", "ara") if lang in installed]
    if len(langs) <= 2:
        pytest.skip("fewer than three Tesseract languages are installed")
    monkeypatch.setattr(tess_library, "MAX_HANDLES", len(langs) - 1)
    tess_library._end_all()
    grey = Image.new("L", (200, 60), 255)
    for lang in langs:
        tess_library.run(["-l", lang, "--psm", "3", "tsv"], grey, 10.0)
    assert tess_library.kept() == len(langs) - 1
    assert (langs[0], ()) not in tess_library.POOL.idle  # the least recently used, ended


@needs_library
def test_a_picture_not_in_grey_is_left_to_the_command() -> None:
    page = Image.new("1", (200, 60), 1)
    assert tess_library.run(READ, page, tesseract.TIMEOUT) is None
    assert tess_library.run(READ, page.convert("L"), tesseract.TIMEOUT) is not None


def test_what_the_library_is_not_asked_for_is_left_to_the_command() -> None:
    assert tess_library.parse(READ) == tess_library.Call(
        "eng", 3, 200, (("tessedit_do_invert", "0"),)
    )
    assert tess_library.parse(OSD) == tess_library.Call(
        "osd", 0, 200, (("min_characters_to_try", "20"),)
    )
    assert tess_library.parse(["-l", "eng", "hocr"]) is None  # another output
    assert tess_library.parse(["-l", "eng", "--psm", "3"]) is None  # text, not TSV
    assert tess_library.parse(["--oem", "0", "tsv"]) is None  # an option it does not take
