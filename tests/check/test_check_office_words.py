"""`dpe-server check --words` (`L2.words`) holds a Word document, PowerPoint deck, Excel
workbook or OpenDocument file to every word its application shows of it
(`check/officetext.py`): the words of all its served pages together; a server dropping one
word fails naming the rule, the word and the words around it in the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpe_server.check import officetext
from tests.check.test_check_mail_words import _as_is, dropping
from tests.check.test_check_web_words import _checked, copied_fixtures

pytestmark = pytest.mark.anyio

drop_arabic = dropping("arabic")
"""Level 2 pages served without the word "arabic" (the i18n Word fixture's)."""
NOT_PACKAGES = frozenset({"protected-secret.docx", "protected-velvet.xlsx", "xls-renamed-as.xlsx"})
"""Office fixtures the reader cannot read, being no zip package: two encrypted files and a
legacy workbook under an xlsx suffix. The server serves the first as `encrypted` (its words
not asked for) and reads the others (velvet's password is Excel's built-in one, which the
server tries; the workbook as the .xls it is): their words are not compared, saying so."""


def _office_fixtures(fixture_dir: Path, folder: Path) -> list[str]:
    """Copies every office fixture into `folder`; their names."""
    return copied_fixtures(fixture_dir, folder, officetext.TYPES)


async def test_check_words_holds_each_office_document_to_its_words(
    fixture_dir: Path, tmp_path: Path
) -> None:
    names = _office_fixtures(fixture_dir, tmp_path / "docs")
    kinds = {Path(n).suffix for n in names}
    assert kinds >= {".docx", ".pptx", ".xlsx", ".odt", ".odp", ".ods", ".fodt", ".fodp", ".fods"}
    report, text = await _checked(tmp_path / "docs", _as_is, len(names) + 10, 60)
    assert "L2.words" not in report.failed_rules(), text
    assert report.passed[("legacy", "L2.words")] == len(set(names) - NOT_PACKAGES), text
    skipped = sorted(n.why for n in report.not_checked if n.rule == "L2.words")
    assert len(skipped) == 2, text
    assert "/protected-velvet-" in skipped[0], text
    assert "/xls-renamed-as-" in skipped[1], text
    assert all("the reader cannot read it (not a zip package" in why for why in skipped), text


async def test_check_words_names_a_lost_office_word_and_where(
    fixture_dir: Path, tmp_path: Path
) -> None:
    names = _office_fixtures(fixture_dir, tmp_path / "docs")
    report, text = await _checked(tmp_path / "docs", drop_arabic, len(names) + 10, 60)
    lost = [f for f in report.failures if f.rule == "L2.words"]
    assert len(lost) == 1, text
    assert lost[0].uri.startswith("dpe://local.dpe.broken/"), text
    assert lost[0].expected.startswith("'arabic' where the file reads “"), text
    assert lost[0].got == "lost"
