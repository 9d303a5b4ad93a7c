"""What the catalog keeps per document once it is idle: the outline, no lock, no probe."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from dpe_server.catalog.catalog import Catalog
from dpe_server.catalog.store import MemoryStore
from dpe_server.isolation.backends import ThreadBackend
from tests.e2e.harness import write_deck

pytestmark = pytest.mark.anyio


async def test_idle_entries_keep_the_outline_only(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    for i in range(3):
        write_deck(root / f"deck{i}.pptx", [f"Slide {i}", "Two"])
    store = MemoryStore()
    catalog = Catalog(root, "h", ThreadBackend(), store=store)
    async with anyio.create_task_group() as tg:
        await catalog.start(tg)
        assert all(e.props is not None for e in catalog.entries())  # probed, not extracted
        await catalog.warm()
        tg.cancel_scope.cancel()
    for entry in catalog.entries():
        assert entry.current
        assert entry.props is None  # the outline says what the probe said
        assert entry._lock is None  # a lock only while an extraction runs or waits
    assert [d.page_count for d in catalog.documents()] == [2, 2, 2]
    restarted = Catalog(root, "h", ThreadBackend(), store=store)
    await restarted.start()
    assert all(e.current and e.props is None and e._lock is None for e in restarted.entries())
    assert restarted.documents() == catalog.documents()


async def test_a_level0_page_describes_only_its_documents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A slice of the listing (a Level 0 or resources/list page) builds the DocumentInfo of
    its documents only, and the listing follows files added and removed."""
    root = tmp_path / "docs"
    for i in range(5):
        write_deck(root / f"deck{i}.pptx", [f"Slide {i}"])
    catalog = Catalog(root, "h", ThreadBackend(), store=MemoryStore())
    await catalog.start()
    built: list[str] = []
    info_of = catalog.info_of
    monkeypatch.setattr(catalog, "info_of", lambda e: built.append(e.rel) or info_of(e))
    listing = catalog.documents()
    assert len(listing) == 5
    assert [d.file_uri.rsplit("/", 1)[-1] for d in listing[1:3]] == ["deck1.pptx", "deck2.pptx"]
    assert built == ["deck1.pptx", "deck2.pptx"]
    (root / "deck0.pptx").unlink()
    write_deck(root / "deck9.pptx", ["Slide 9"])
    await catalog.rescan()
    assert [e.rel for e in catalog.entries()] == [f"deck{i}.pptx" for i in (1, 2, 3, 4, 9)]


def test_an_entry_holds_no_dict() -> None:
    """Entries are slotted: no per-entry `__dict__` (one is kept per document)."""
    from dpe_server.catalog.catalog import Entry
    from dpe_server.catalog.folder import FileStat

    entry = Entry("a/b.docx", "b-123456", FileStat(1, 2, 3, 4), "k")
    assert not hasattr(entry, "__dict__")
    with pytest.raises(AttributeError):
        entry.other = 1  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "rel",
    ["a/b.docx", "b.tar.gz", ".x", "x.", "a..b", "noext", "dir.d/file", "a/.h.docx", "ü/É.PDF"],
)
def test_path_parts_read_from_strings_as_pathlib_reads_them(rel: str) -> None:
    from pathlib import PurePosixPath

    from dpe_server.catalog.folder import stem_of
    from dpe_server.extractors.registry import file_type, suffix_of

    assert stem_of(rel) == PurePosixPath(rel).stem
    assert suffix_of(rel) == PurePosixPath(rel).suffix
    assert file_type(rel) == PurePosixPath(rel).suffix.lower().lstrip(".")


def test_outlines_read_back_share_equal_page_metadata_of_the_same_types() -> None:
    from dpe_server.catalog.store import Outline

    def stored(metadata: dict[str, object]) -> Outline:
        page = [0, "Sheet1", 3, metadata]
        return Outline.from_json({"title": "t", "keywords": [], "summary": "", "pages": [page]})

    a, b = stored({"width": 595.3, "layout": "x"}), stored({"width": 595.3, "layout": "x"})
    assert a.pages[0].metadata is b.pages[0].metadata
    assert a.pages[0].title is b.pages[0].title
    assert a.to_json() == b.to_json()
    # Equal values of other types (or of another sign) are not the same metadata.
    for other in ({"flag": True}, {"flag": 1}, {"flag": 1.0}):
        got = stored(dict(other)).pages[0].metadata
        assert repr(got) == repr(other)
    assert repr(stored({"w": -0.0}).pages[0].metadata) == repr({"w": -0.0})
    assert repr(stored({"w": 0.0}).pages[0].metadata) == repr({"w": 0.0})
    nested = stored({"list": [1]}).pages[0].metadata  # unhashable: kept as it is
    assert nested == {"list": [1]}
