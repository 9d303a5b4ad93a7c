"""The documentation stays true: every link in README.md and docs/ resolves to a file of this
repository (and a heading of it when it names one), and docs/reference.md describes every
option every command accepts."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from dpe_server.cli.command import _parser

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

_FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"\]\(([^)\s]+)\)")


def links(page: Path) -> list[str]:
    """The targets of the page's Markdown links, code blocks and code spans left out."""
    text = _CODE.sub("", _FENCE.sub("", page.read_text(encoding="utf-8")))
    return _LINK.findall(text)


def anchors(page: Path) -> set[str]:
    """The anchors of the page's headings, as GitHub makes them."""
    text = _FENCE.sub("", page.read_text(encoding="utf-8"))
    found = set()
    for heading in re.findall(r"^#+\s+(.*)$", text, re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        found.add(slug)
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_link_resolves_inside_the_repository(page: Path) -> None:
    for target in links(page):
        assert not re.match(r"[a-z][a-z0-9+.-]*:", target), f"{target}: points outside"
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        assert file.is_relative_to(ROOT), f"{target}: outside the repository"
        assert file.exists(), f"{target}: no such file"
        if anchor:
            assert anchor in anchors(file), f"{target}: no such heading"


def test_the_pages_are_linked_and_the_readme_stays_a_front_page() -> None:
    readme = ROOT / "README.md"
    linked = {(ROOT / target.partition("#")[0]).resolve() for target in links(readme)}
    assert set(PAGES[1:]) <= linked, "a page of docs/ the README does not link to"
    assert len(readme.read_bytes()) < 6 * 1024


def _sections() -> dict[str, str]:
    """docs/reference.md split at its `## dpe-server COMMAND` headings."""
    text = (ROOT / "docs" / "reference.md").read_text(encoding="utf-8")
    parts = re.split(r"^## dpe-server (\w+).*$", text, flags=re.MULTILINE)
    return {"": parts[0], **dict(zip(parts[1::2], parts[2::2], strict=True))}


def _options(parser: argparse.ArgumentParser) -> list[str]:
    return [
        option
        for action in parser._actions
        for option in action.option_strings
        if option.startswith("--") and option != "--help"
    ]


def _missing(parser: argparse.ArgumentParser, text: str) -> list[str]:
    """The options of `parser` that `text` never names (`--no-cache` does not name `--no`)."""
    return [o for o in _options(parser) if not re.search(rf"{re.escape(o)}(?![\w-])", text)]


def test_the_reference_describes_every_option_of_every_command() -> None:
    parser = _parser(with_check=True)
    sections = _sections()
    assert _missing(parser, sections[""]) == []
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert set(commands.choices) == set(sections) - {""}
    for name, command in commands.choices.items():
        assert _missing(command, sections[name]) == [], f"dpe-server {name}"
