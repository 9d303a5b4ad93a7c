"""The commands the README and docs/ give, as a reader would type them: installs that work
from a clone (the package is not on an index, and pipx leaves an installed tool alone without
`--force`), and Inspector calls that carry the token the README's HTTP set-up requires."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
EXTRAS = set(
    tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["optional-dependencies"]
)
_INSTALL = re.compile(r"\b(?:pipx|pip|uv tool) install [^`#|\n]*")
_TARGET = re.compile(r"^\.(?:\[([a-z,]+)\])?$")
_AGAIN = {"pipx": "--force", "uv": "--reinstall"}
"""What makes an install of an extra take effect over a plain install already there."""


def _commands(pattern: re.Pattern[str]) -> list[tuple[str, str]]:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8").replace("\\\n", " ")
        found += [(page.name, m.group(0).strip()) for m in pattern.finditer(text)]
    return found


def test_every_install_command_installs_from_the_clone_with_an_extra_that_exists() -> None:
    commands = _commands(_INSTALL)
    assert len(commands) >= 5  # the README's two, the ocr and postgres extras
    for page, command in commands:
        words = shlex.split(command)
        targets = [w for w in words[words.index("install") + 1 :] if not w.startswith("-")]
        assert len(targets) == 1, (page, command)
        match = _TARGET.match(targets[0])
        assert match is not None, f"{page}: {command} names no clone (the package is not published)"
        extras = set((match.group(1) or "").split(",")) - {""}
        assert extras <= EXTRAS, (page, command)
        if extras:
            assert words[0] in _AGAIN, (page, command)
            assert _AGAIN[words[0]] in words, f"{page}: {command} is a no-op over a plain install"


def test_the_inspector_over_http_carries_the_bearer_token() -> None:
    calls = [
        c
        for c in _commands(re.compile(r"npx @modelcontextprotocol/inspector [^\n]*"))
        if "--cli" in c[1]
    ]
    over_http = [c for page, c in calls if "http://" in c]
    assert len(over_http) >= 2
    for command in over_http:
        words = shlex.split(command, posix=False)
        header = words.index("--header")
        assert words[header + 1] == '"Authorization: Bearer $DPE_SERVER_TOKEN"', command
