"""Shared test fixtures: the fixture documents, the corpus (skipped when absent) and its
trees (extracted once per session), and the event loop of async tests (asyncio, the one the
server runs on)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixtures.build import copy_documents
from tests.corpus_trees import Outcome, extract_corpus

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


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The test that first asks for the corpus trees waits for the whole extraction."""
    for item in items:
        if "corpus_outcomes" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.timeout(900))


@pytest.fixture(scope="session")
def corpus_outcomes(corpus: Path) -> dict[Path, Outcome]:
    """Every corpus document extracted once per session (tests/corpus_trees.py): its tree or
    its error, shared by every corpus test."""
    return extract_corpus(corpus)
