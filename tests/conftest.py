"""Shared test fixtures: the fixture documents, the corpus (skipped when absent) and its
trees (extracted once per session), and the event loop of async tests (asyncio, the one the
server runs on)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import hypothesis
import pytest
from hypothesis.configuration import set_hypothesis_home_dir

from fixtures.build import copy_documents
from tests import postgres
from tests.corpus_trees import Outcome, extract_corpus
from tests.once import once_per_run

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
TOOL_FOLDERS = {".git", ".venv", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"}
"""What Python and the tools that run the tests write in the repository: not the tests."""
SCRATCH = {ROOT / "bench" / "out", ROOT / ".cache"}
"""Git-ignored scratch of the benchmarks (a 100,000-document folder, caches) and of the
interop tools: not walked (a bench may write there while tests run; walking it cost seconds)."""

# A server a test starts without --cache-dir (in process or as a child) keeps its cache in a
# temporary folder of this run, never in the user's ~/.cache/dpe-server.
_CACHE_HOME = tempfile.TemporaryDirectory(prefix="dpe-server-test-xdg-")
os.environ["XDG_CACHE_HOME"] = _CACHE_HOME.name

# Hypothesis keeps its caches in the temporary folder, not in .hypothesis/ of the working
# directory, and no example database.
set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "dpe-server-test-hypothesis")
hypothesis.settings.register_profile("dpe-server", database=None)
hypothesis.settings.load_profile("dpe-server")


def _footprint() -> dict[str, tuple[int, int]]:
    """Size and mtime of every file of the repository (not the tools' folders), of every
    file of the corpus, and the names beside the corpus."""
    found: dict[str, tuple[int, int]] = {}
    for top in (ROOT, CORPUS):
        for folder, dirs, files in os.walk(top):
            dirs[:] = [d for d in dirs if d not in TOOL_FOLDERS and Path(folder, d) not in SCRATCH]
            for name in files:
                path = Path(folder, name)
                with contextlib.suppress(OSError):
                    stat = path.stat()
                    found[str(path)] = (stat.st_size, stat.st_mtime_ns)
    if CORPUS.parent.is_dir():
        found.update({str(p): (0, 0) for p in CORPUS.parent.iterdir()})
    return found


@pytest.fixture(scope="session", autouse=True)
def _tests_write_only_into_temporary_folders() -> Iterator[None]:
    """At the end of the session: no file of the repository or the corpus was created,
    changed or removed, and nothing appeared beside the corpus. Under pytest-xdist every
    worker checks from before its first test to after its last, so a write fails the run in
    the worker that made it (and in any worker still running)."""
    before = _footprint()
    yield
    after = _footprint()
    changed = sorted(k for k in before.keys() & after.keys() if before[k] != after[k])
    found = {
        "created": sorted(after.keys() - before.keys()),
        "removed": sorted(before.keys() - after.keys()),
        "changed": changed,
    }
    assert found == {"created": [], "removed": [], "changed": []}, (
        f"the tests wrote outside their temporary folders: {found} (or these files were edited "
        "while the tests ran)"
    )


@pytest.fixture(scope="session")
def pg_server() -> Iterator[postgres.Postgres]:
    """One PostgreSQL for the session's tests that need one (`tests.postgres`), started when
    first asked for; a test asking for it is skipped, saying why, where none can run."""
    if why := postgres.available():
        pytest.skip(f"no PostgreSQL: {why}")
    with postgres.running() as server:
        yield server


@pytest.fixture
def pg_url(pg_server: postgres.Postgres, request: pytest.FixtureRequest) -> str:
    """A fresh database on the session's PostgreSQL, for one test."""
    return postgres.fresh_database(pg_server.url, "t_" + request.node.name)


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


LONGEST_MODULES = (
    "tests/extractors/test_ocr.py",
    "tests/extractors/test_picture_ocr.py",
    "tests/check/test_check.py",
    "tests/catalog/test_replicas.py",
    "tests/hostile/test_corpus_sweep.py",
    "tests/hostile/test_hostile.py",
    "tests/catalog/test_watcher.py",
    "tests/extractors/test_legacy.py",
    "tests/e2e/test_legacy_network.py",
    "tests/e2e/test_http_connections.py",
    "tests/e2e/test_search_load.py",
    "tests/e2e/test_terminal.py",
    "tests/e2e/test_server_e2e.py",
    "tests/test_bundle.py",
    "tests/surface/test_viewer_browser.py",
    "tests/surface/test_viewer.py",
)
"""The modules that take longest (`python3 dev.py test --durations=0`, summed per module),
run first: pytest-xdist hands modules out in the order collected (`--no-loadscope-reorder`),
and one of them handed out last would leave the other workers idle at the end. Only the
order depends on this list."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest modules first (`LONGEST_MODULES`), the others in file order; the test that
    first asks for the corpus trees waits for the whole extraction."""
    rank = {module: i for i, module in enumerate(LONGEST_MODULES)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))
    for item in items:
        if "corpus_outcomes" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.timeout(900))


@pytest.fixture(scope="session")
def corpus_outcomes(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[Path, Outcome]:
    """Every corpus document extracted once per run (tests/corpus_trees.py), even across
    pytest-xdist workers (tests/once.py): its tree or its error, shared by every corpus test."""
    return once_per_run(tmp_path_factory, "corpus-outcomes", lambda: extract_corpus(corpus))
