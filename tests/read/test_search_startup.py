"""A search while the server is still reading its documents answers from what is indexed and
says first, in words, how many of how many documents are still being read (the answer's
`note` came last, after every result, as "N documents not extracted yet")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpe_server.catalog.catalog import Catalog
from dpe_server.isolation.backends import ThreadBackend
from dpe_server.read.search import search
from tests.e2e.harness import make_folder

pytestmark = pytest.mark.anyio


async def test_a_search_during_start_up_says_first_how_many_are_still_being_read(
    tmp_path: Path,
) -> None:
    catalog = Catalog(make_folder(tmp_path / "docs"), "h", ThreadBackend())
    await catalog.start()  # listed and probed (locked.docx: encrypted), none extracted
    deck = next(e.doc_ref for e in catalog.entries() if e.rel == "a/report.pptx")
    await catalog.page(deck, 1)  # a page read is indexed at once
    text = json.dumps(await search(catalog, "beta"), ensure_ascii=False, indent=2)
    body = json.loads(text)
    assert list(body)[:2] == ["query", "note"]  # before the results, where a model reads first
    assert body["note"] == (
        "3 of 4 documents are still being read: their words may be missing from these "
        "results; search again shortly."
    )
    assert (body["indexing"], body["total"]) == (True, 2)  # the page read is found already
    assert all("/elements/p1-" in r["uri"] for r in body["results"])
    pptx = await search(catalog, "beta", file_type="pptx")
    assert pptx["note"].startswith("2 of 2 documents (pptx) are still being read")
    await catalog.warm()
    done = await search(catalog, "beta")
    assert (done["indexing"], "note" in done) == (False, False)
    catalog.store.close()
