"""The golden payloads in fixtures/expected/ are what this server answers for the fixtures.

A difference fails with a unified diff of the first files that differ. When the change is
intended, regenerate with `python fixtures/goldens.py --write` and commit the result.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fixtures import goldens

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def produced(fixture_dir: Path) -> dict[str, str]:
    files: dict[str, str] = goldens.generate_fresh(fixture_dir)
    return files


def test_goldens_match_committed(produced: dict[str, str]) -> None:
    want = goldens.committed()
    assert want, f"fixtures/expected/ is empty: run `{goldens.REGENERATE}`"
    found = goldens.differences(produced, want)
    assert not found, (
        "\n\n".join(found) + f"\n\nIf the change is intended, regenerate: {goldens.REGENERATE}"
    )


def test_goldens_machine_independent(produced: dict[str, str]) -> None:
    leaks = [name for name, text in produced.items() if "/tmp" in text or "dpe-goldens" in text]
    assert leaks == []
    dates = {name for name, text in produced.items() if "2026-01-01T00:00:00Z" in text}
    assert "catalog.json" in dates


def test_goldens_cover_every_level_and_format(produced: dict[str, str]) -> None:
    names = set(produced)
    for ext in ("json", "md", "txt"):
        assert f"catalog.{ext}" in names
        assert any(n.endswith(f"/document.{ext}") for n in names)
        assert any(n.endswith(f"/pages.{ext}") for n in names)
        assert any("/pages/0." in n and n.endswith(ext) for n in names)
        assert any("/elements/" in n and n.endswith(ext) for n in names)


def test_goldens_differences_show_a_unified_diff() -> None:
    found = goldens.differences({"a.json": "x\ny\n", "new.md": "z\n"}, {"a.json": "x\n"})
    text = "\n".join(found)
    assert "new files without a golden" in text
    assert "--- expected/a.json" in text
    assert "+y" in text
