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
    from dpe_server.model.info import PageInfo

    def stored(metadata: dict[str, object]) -> Outline:
        page = PageInfo(0, "Sheet1", 3, dict(metadata))  # type: ignore[arg-type]
        return Outline.loads(Outline("t", (), "", [page], {}).dumps())

    a, b = stored({"width": 595.3, "layout": "x"}), stored({"width": 595.3, "layout": "x"})
    assert a.pages[0].metadata is b.pages[0].metadata
    assert a.pages[0].title is b.pages[0].title
    assert a == b
    # Equal values of other types (or of another sign) are not the same metadata.
    for other in ({"flag": True}, {"flag": 1}, {"flag": 1.0}):
        got = stored(dict(other)).pages[0].metadata
        assert repr(got) == repr(other)
    assert repr(stored({"w": -0.0}).pages[0].metadata) == repr({"w": -0.0})
    assert repr(stored({"w": 0.0}).pages[0].metadata) == repr({"w": 0.0})
    nested = stored({"list": [1]}).pages[0].metadata  # unhashable: kept as it is
    assert nested == {"list": [1]}


def test_a_stored_outline_lists_its_document_before_parsing_its_page_list(tmp_path: Path) -> None:
    """A restart parses what Level 0 lists of each document (title, keywords, summary,
    metadata, page count, pages left to recognise); the page list stays text until a Level 1
    read asks for it, and is then what was stored."""
    from dpe_server.catalog.sqlite import SqliteStore
    from dpe_server.catalog.store import Outline
    from dpe_server.model.info import PageInfo

    pages = [
        PageInfo(0, "Cover", 2, {"width": 595.3}),
        PageInfo(1, "Scan", 1, {"ocr": "pending"}),
        PageInfo(2, "Scan 2", 0, {"ocr": "failed"}),
    ]
    outline = Outline("Report", ("revenue",), "A report.", pages, {"author": "A. N."})
    assert (outline.page_count, outline.pending) == (3, (1,))
    store = SqliteStore(tmp_path / "cache")
    store.put_document("k", outline, [])
    store.close()

    restored = SqliteStore(tmp_path / "cache").lookup("k")
    assert restored is not None
    assert restored.outline is not None
    got = restored.outline
    assert isinstance(got._pages, str)  # not parsed by the lookup
    assert (got.title, got.keywords, got.summary) == ("Report", ("revenue",), "A report.")
    assert (got.page_count, got.pending, dict(got.metadata)) == (3, (1,), {"author": "A. N."})
    assert got.dumps() == outline.dumps()  # stored again as it was, still unparsed
    assert got.pages == tuple(pages)
    assert got == outline
    recognised = got.with_page(PageInfo(1, "Invoice", 4, {"ocr": "done"}))
    assert (recognised.pending, recognised.pages[1].title, recognised.page_count) == (
        (),
        "Invoice",
        3,
    )
    with pytest.raises(AttributeError):
        got.title = "changed"  # type: ignore[misc]
