"""`dpe-server check --words` (`L2.words`) holds a web page, web archive, Markdown text, EPUB
or text file to every word a browser shows of it (`check/webtext.py`): the words of all its
served pages together, since the server cuts it into pages at its headings; a server
dropping one word fails naming the rule, the word and the words around it in the file, and
a walk stopped by `--max-pages` before the last page says why it compared nothing."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from dpe_server.check import InProcessTarget, Limits, Report, render_text, run_check, webtext
from dpe_server.check.rules_page import LOCATED_WORDS, l2_words
from fixtures.builders import epub, markdown
from tests.check.test_check import _broken_server
from tests.check.test_check_mail_words import Reader, _as_is, dropping

pytestmark = pytest.mark.anyio

drop_madura = dropping("madura")
"""Level 2 pages served without the word "madura" (the EPUB 2 fixture's last chapter)."""


def copied_fixtures(fixture_dir: Path, folder: Path, types: tuple[str, ...]) -> list[str]:
    """Copies every fixture of one of `types` into `folder`; their names."""
    folder.mkdir()
    names = sorted(p.name for p in fixture_dir.iterdir() if p.suffix.lower().lstrip(".") in types)
    for name in names:
        shutil.copyfile(fixture_dir / name, folder / name)
    return names


def _web_fixtures(fixture_dir: Path, folder: Path) -> list[str]:
    return copied_fixtures(fixture_dir, folder, webtext.TYPES)


async def _checked(
    folder: Path, breaker: Callable[[Reader], Reader], docs: int, pages: int
) -> tuple[Report, str]:
    """`dpe-server check --words` of a server of `folder` broken by `breaker`: its report,
    and that report as text."""
    limits = Limits(max_docs=docs, max_pages=pages, max_elements=1, words=True)
    target = InProcessTarget(lambda: _broken_server(folder, breaker))
    report = await run_check(target, ("legacy",), limits)
    return report, render_text(report, verbose=True)


async def test_check_words_holds_each_web_document_to_its_words(
    fixture_dir: Path, tmp_path: Path
) -> None:
    names = _web_fixtures(fixture_dir, tmp_path / "docs")
    assert {Path(n).suffix for n in names} >= {".html", ".htm", ".mhtml", ".md", ".epub", ".txt"}
    report, text = await _checked(tmp_path / "docs", _as_is, len(names), 10)
    assert "L2.words" not in report.failed_rules(), text
    assert report.passed[("legacy", "L2.words")] == len(names), text
    assert not [n for n in report.not_checked if n.rule == "L2.words"], text


async def test_check_words_names_a_lost_web_word_and_where(
    fixture_dir: Path, tmp_path: Path
) -> None:
    _web_fixtures(fixture_dir, tmp_path / "docs")
    report, text = await _checked(tmp_path / "docs", drop_madura, 10, 10)
    lost = [f for f in report.failures if f.rule == "L2.words"]
    assert len(lost) == 1, text
    assert lost[0].uri.startswith("dpe://local.dpe.broken/"), text
    assert (
        lost[0].expected
        == "'madura' where the file reads “Porto, summer EB-Letter2 A maçã está madura.”"
    ), text
    assert lost[0].got == "lost"
    assert "L2.words" in text


async def test_check_words_says_why_a_web_document_cut_short_is_not_compared(
    fixture_dir: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    shutil.copyfile(fixture_dir / "epub2-ncx.epub", folder / "epub2-ncx.epub")
    report, text = await _checked(folder, drop_madura, 1, 1)
    assert "L2.words" not in report.failed_rules(), text
    assert report.passed[("legacy", "L2.words")] == 0
    why = [n.why for n in report.not_checked if n.rule == "L2.words"]
    assert len(why) == 1, text
    assert "pages 1..1 are not read (--max-pages 1)" in why[0]


def test_markdown_words_are_the_body_s_not_the_front_matter_s(fixture_dir: Path) -> None:
    """The front matter is the document's metadata, not text a reader shows: its words are
    not asked of the pages."""
    text = webtext.document_text(fixture_dir / markdown.README)
    assert "otterkit counts otters" in " ".join(text.split())
    assert "MD-Title" not in text
    assert "draft" not in text


def test_every_lost_word_of_a_document_is_named() -> None:
    """The first lost words each with where the file says them, the rest listed after: a
    document losing many words still names every one."""
    lost = [f"w{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(LOCATED_WORDS + 5)]
    problems = l2_words("kept " + " ".join(lost), "kept", True)
    assert len(problems) == LOCATED_WORDS + 1
    assert problems[0].expected == f"'{lost[0]}' where the file reads “kept {' '.join(lost[:7])}”"
    named = " ".join(p.expected + " " + p.got for p in problems)
    assert all(f"'{word}'" in named for word in lost)


async def test_check_words_asks_no_words_of_an_e_book_served_as_encrypted(
    tmp_path: Path,
) -> None:
    """An e-book under DRM is served as its error with no pages: its words are not asked
    for, though the reader here finds them (the fixture's chapters are not scrambled)."""
    folder = tmp_path / "docs"
    folder.mkdir()
    members = epub.epub3_members()
    members["META-INF/encryption.xml"] = members["META-INF/encryption.xml"].replace(
        b"http://www.idpf.org/2008/embedding", b"http://www.w3.org/2001/04/xmlenc#aes128-cbc"
    )
    epub.write_epub(folder / "protected.epub", members)
    assert webtext.document_text(folder / "protected.epub").split()
    report, text = await _checked(folder, _as_is, 1, 2)
    assert "L2.words" not in report.failed_rules(), text
    assert report.passed[("legacy", "L2.words")] == 0
