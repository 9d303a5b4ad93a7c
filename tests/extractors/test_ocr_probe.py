"""What `settings.tesseract()` asks the `tesseract` command: its version and languages, the
two commands run side by side (every `dpe-server read` waits for them)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from dpe_server.extractors.ocr import settings

# `--version` answers only once `--list-langs` has started (waiting at most 10 s for it): run
# one after the other, it says "alone". No fixed sleep: the wait ends as soon as it can.
FAKE = """#!/bin/sh
case "$1" in
--version)
  i=0
  while [ ! -e "{mark}" ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i+1)); done
  if [ -e "{mark}" ]; then echo "tesseract 9.9.1"; else echo "tesseract alone"; fi
  echo " leptonica-1.82.0" ;;
--list-langs)
  : > "{mark}"
  printf 'List of available languages in "/nowhere/tessdata/" (3):\\neng\\nosd\\nchi_sim\\n' ;;
*) exit 1 ;;
esac
"""


@pytest.fixture
def fake_tesseract(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    command = bin_dir / "tesseract"
    command.write_text(FAKE.format(mark=tmp_path / "langs-started"))
    command.chmod(0o755)
    monkeypatch.setenv("PATH", os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")]))
    settings.tesseract.cache_clear()
    yield command
    settings.tesseract.cache_clear()


def test_version_and_languages_asked_side_by_side(fake_tesseract: Path) -> None:
    assert settings.tesseract() == (str(fake_tesseract), "9.9.1", ("chi_sim", "eng"))
    assert settings.cache_variant("auto", ("en",)) == "ocr=auto:en=eng:tesseract 9.9.1"


def test_a_command_that_fails_is_no_tesseract(fake_tesseract: Path) -> None:
    fake_tesseract.write_text("#!/bin/sh\nexit 3\n")
    assert settings.tesseract() == ("", "", ())
