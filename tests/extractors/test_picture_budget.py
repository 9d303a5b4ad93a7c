"""The seconds one extraction spends recognising an office file's pictures follow `--timeout`
(a quarter of it: a page of many photos fits its job's deadline, whatever the deadline)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpe_server.cli.command import _limits, _parser
from dpe_server.extractors import Limits
from dpe_server.extractors.docx.extract import extract
from fixtures.builders import scanned


@pytest.mark.parametrize(("timeout", "seconds"), [("60", 15.0), ("8", 2.0), ("600", 150.0)])
def test_the_picture_budget_is_a_quarter_of_the_timeout(
    tmp_path: Path, timeout: str, seconds: float
) -> None:
    args = _parser(False).parse_args(["read", str(tmp_path), "dpe://x", "--timeout", timeout])
    assert _limits(args).picture_seconds == seconds


def test_an_extraction_past_its_budget_skips_the_pictures(tmp_path: Path) -> None:
    path = tmp_path / "table.docx"
    scanned.write_docx(path)
    for limits, state in ((Limits(picture_seconds=0.0), "skipped"), (Limits(ocr="off"), None)):
        with path.open("rb") as f:
            doc = extract(f, limits)
        (picture,) = [e for p in doc.pages for e in p.elements if e.category.value == "image"]
        assert picture.metadata.get("ocr") == state
        assert "text" not in picture.content
