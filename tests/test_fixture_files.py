"""The committed fixture documents (fixtures/*.xlsx, ...) are what fixtures/build.py writes.

Every registered builder is run twice into temporary folders: the two builds are the same
bytes (deterministic, whatever the library versions), they write exactly the committed set
of documents, and, where the installed writing libraries are the versions pinned in
pyproject.toml's `fixtures` extra, the committed bytes.
"""

from __future__ import annotations

import importlib.metadata
import re
import tomllib
from pathlib import Path

import pytest

from fixtures.build import HERE, build_all, documents, main

ROOT = Path(__file__).resolve().parents[1]
REBUILD = "python fixtures/build.py, then commit the documents that changed"


def pins() -> dict[str, str]:
    """The `name==version` entries of pyproject.toml's `fixtures` extra."""
    with (ROOT / "pyproject.toml").open("rb") as f:
        extra = tomllib.load(f)["project"]["optional-dependencies"]["fixtures"]
    found = (re.fullmatch(r"([A-Za-z0-9_.-]+)==([^;\s]+)", item.strip()) for item in extra)
    return {m[1]: m[2] for m in found if m}


def _contents(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in documents(folder)}


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """The fixture documents built twice: by `build_all`, and by `build.py --out DIR`."""
    first, second = tmp_path_factory.mktemp("build-a"), tmp_path_factory.mktemp("build-b")
    build_all(first)
    assert main(["--out", str(second)]) == 0
    return _contents(first), _contents(second)


def test_two_builds_write_the_same_bytes(
    builds: tuple[dict[str, bytes], dict[str, bytes]],
) -> None:
    first, second = builds
    assert first.keys() == second.keys()
    assert [name for name in first if first[name] != second[name]] == []


def test_a_build_writes_exactly_the_committed_documents(
    builds: tuple[dict[str, bytes], dict[str, bytes]],
) -> None:
    built, committed = builds[0].keys(), _contents(HERE).keys()
    assert sorted(built - committed) == [], f"new documents not committed: {REBUILD}"
    assert sorted(committed - built) == [], "committed documents no builder writes"


def test_a_build_reproduces_the_committed_bytes(
    builds: tuple[dict[str, bytes], dict[str, bytes]],
) -> None:
    pinned = pins()
    assert {"openpyxl", "python-pptx", "python-docx", "reportlab"} <= set(pinned)
    installed = {name: importlib.metadata.version(name) for name in pinned}
    other = {name: v for name, v in installed.items() if v != pinned[name]}
    if other:
        pytest.skip(
            "the fixture writers installed are not the pinned versions "
            + ", ".join(f"{name} {v} (pinned {pinned[name]})" for name, v in sorted(other.items()))
        )
    built, committed = builds[0], _contents(HERE)
    differ = sorted(
        name for name in built.keys() & committed.keys() if built[name] != committed[name]
    )
    assert differ == [], f"a rebuild changes these documents: {REBUILD}"


def test_build_help_writes_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    assert "--out DIR" in capsys.readouterr().out
    assert not Path("--help").exists()
    assert not (HERE / "--help").exists()
