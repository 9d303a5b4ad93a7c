"""Shared test fixtures: the built fixture folder and the corpus (skipped when absent)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"


def _load_build_module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("fixtures_build", ROOT / "fixtures" / "build.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["fixtures_build"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def fixture_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """fixtures/build.py run once per session into a temporary folder."""
    out = tmp_path_factory.mktemp("fixtures")
    _load_build_module().build_all(out)
    return out


@pytest.fixture(scope="session")
def corpus() -> Path:
    """../shared/corpus; tests that use it skip when it is absent."""
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is not present")
    return CORPUS
