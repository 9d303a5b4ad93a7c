"""A panic inside calamine (Rust, through pyo3) is the document's `corrupt` error and nothing
on stderr: its hook printed `thread '<unnamed>' panicked at ...` and, with RUST_BACKTRACE set,
a backtrace of 30 lines to the terminal of `serve` and `read` (a worker's stderr is the
server's)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.e2e.harness import age

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _panicking_xlsb(path: Path) -> None:
    """fixtures/xlsb-values.xlsb with its first sheet's relationship renamed: calamine's
    workbook reader looks the sheet's id up in the relationships and panics (`no entry found
    for key`), as on a real Excel 2007 beta file."""
    out = io.BytesIO()
    with zipfile.ZipFile(FIXTURES / "xlsb-values.xlsb") as src, zipfile.ZipFile(out, "w") as z:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "xl/_rels/workbook.bin.rels":
                assert b'Id="rId1"' in data
                data = data.replace(b'Id="rId1"', b'Id="rId9"')
            z.writestr(info.filename, data)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(out.getvalue())


@pytest.mark.parametrize(
    "uri",
    [
        "dpe://local.dpe.panic?format=text",  # Level 0: parsed in a worker process
        "dpe://local.dpe.panic/broken-b00be8",  # Level 1: parsed in this process
    ],
    ids=["worker", "one-shot"],
)
def test_a_rust_panic_is_a_corrupt_document_and_silent(tmp_path: Path, uri: str) -> None:
    _panicking_xlsb(tmp_path / "panic" / "broken.xlsb")
    done = subprocess.run(
        [sys.executable, "-m", "dpe_server", "read", str(age(tmp_path / "panic")), uri],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "RUST_BACKTRACE": "1"},
    )
    reason = "The spreadsheet is malformed: its reader failed (PanicException: no entry found"
    assert reason in done.stdout + done.stderr
    assert "panicked" not in done.stderr
    assert "backtrace" not in done.stderr
