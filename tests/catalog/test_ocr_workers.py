"""The background OCR pass recognises pages on every worker of the backend at once, pages of
different documents too (it took one document, hence one page of a folder of one-page scans, at
a time). A backend of two workers holds each recognition until two are under way: the pass
finishes only if it ran two at once. The engine is a fake (no OCR extra needed)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import pytest

from dpe_server.catalog.catalog import Catalog
from dpe_server.extractors.ocr import Word, states
from dpe_server.extractors.ooxml import picture_text
from dpe_server.isolation.backends import ThreadBackend
from dpe_server.model.tree import Page
from tests.catalog.test_ocr_later import _pptx


class TwoWorkers(ThreadBackend):
    """Two workers; each recognition is held until two are under way at once."""

    def __init__(self) -> None:
        super().__init__(concurrency=2)
        self.under_way = 0
        self.most = 0
        self.two = anyio.Event()

    @property
    def parallelism(self) -> int:
        return 2

    async def recognise(self, root: Path, rel: str, index: int) -> Page | None:
        self.under_way += 1
        self.most = max(self.most, self.under_way)
        if self.under_way == 2:
            self.two.set()
        try:
            await self.two.wait()
            return await super().recognise(root, rel, index)
        finally:
            self.under_way -= 1


@pytest.fixture
def fake_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    def recognise(image: Any, *settings: Any) -> list[Word]:
        return [Word("SEEN", 0, 0, 40, 12, 0.9)]

    monkeypatch.setattr(states, "installed", lambda engine="auto": True)
    monkeypatch.setattr(picture_text, "recognise", recognise)
    monkeypatch.setattr(picture_text, "time", SimpleNamespace(monotonic=lambda: 0.0))


@pytest.mark.anyio
@pytest.mark.usefixtures("fake_engine")
async def test_pages_of_two_documents_are_recognised_at_once_on_two_workers(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for n in range(3):
        _pptx(folder / f"deck{n}.pptx", pictures=(1,))  # one page each
    backend = TwoWorkers()
    catalog = Catalog(folder, "h", backend)
    await catalog.start()
    await catalog.warm()
    assert catalog.indexing() == 3
    with anyio.fail_after(30):  # one at a time, the first would wait for a second forever
        await catalog.recognise_pending()
    assert backend.most == 2
    assert catalog.indexing() == 0
    for doc in catalog.documents():
        infos = await catalog.page_infos(doc.doc_ref)
        assert [i.metadata.get("ocr") for i in infos] == [True]
