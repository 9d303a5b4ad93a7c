"""Shared test fixtures: the fixture documents, the corpus (skipped when absent), and the
event loop of async tests (asyncio, the one the server runs on)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixtures.build import copy_documents

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def fixture_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the committed fixture documents (fixtures/*.xlsx, ...), made once per session
    in a temporary folder: a test that writes beside them cannot touch the repository."""
    out = tmp_path_factory.mktemp("fixtures")
    copy_documents(out)
    return out


@pytest.fixture(scope="session")
def corpus() -> Path:
    """../shared/corpus; tests that use it skip when it is absent."""
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is not present")
    return CORPUS
