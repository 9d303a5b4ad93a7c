"""Which page of LibreOffice's pdf export the viewer draws for a document's page: a slide is
the export's page of the same index, a sheet its page too, or the page counting the sheets
shown before it where LibreOffice left hidden sheets out, a docx section the printed page
found by the first texts of the sections up to it."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from dpe_server.isolation.backends import ThreadBackend
from dpe_server.surface.app import DpeApp, Settings
from dpe_server.surface.viewer_pictures import Pictures
from fixtures.goldens import HERE

pytestmark = pytest.mark.anyio
NAMES = ("xlsx-constructs.xlsx", "doc-everything.docx", "deck-everything.pptx")


@pytest.fixture
async def pictures(tmp_path: Path) -> AsyncIterator[Pictures]:
    for name in NAMES:
        shutil.copyfile(HERE / name, tmp_path / name)
    settings = Settings(root=tmp_path, host="h", watch=False, warm=False, cache=False)
    settings.backend = ThreadBackend()
    app = DpeApp(settings)
    await app.catalog.start()
    try:
        yield Pictures(app)
    finally:
        await app.aclose()


def _ref(pictures: Pictures, name: str) -> str:
    return next(e.doc_ref for e in pictures.app.catalog.entries() if e.rel == name)


async def test_a_sheet_is_its_page_or_its_page_among_the_sheets_shown(pictures: Pictures) -> None:
    """xlsx-constructs: Sales, Data, Hidden (hidden), Empty, Intl, Pivot, Controls, Shapes,
    ChartSheet: the worker draws page N when the export has all nine sheets, else the page
    among the eight shown."""
    ref = _ref(pictures, "xlsx-constructs.xlsx")
    shown = {0: 0, 1: 1, 2: -1, 3: 2, 8: 7}
    for sheet, page in shown.items():
        found = await pictures.page_of(ref, "xlsx-constructs.xlsx", sheet)
        assert found == {"rendered_page": sheet, "sheets": 9, "shown_page": page}, sheet


async def test_a_slide_is_its_own_page(pictures: Pictures) -> None:
    ref = _ref(pictures, "deck-everything.pptx")
    found = await pictures.page_of(ref, "deck-everything.pptx", 4)  # hidden: exported too
    assert found == {"rendered_page": 4}


async def test_a_section_is_found_by_the_first_texts_up_to_it(pictures: Pictures) -> None:
    ref = _ref(pictures, "doc-everything.docx")
    found = await pictures.page_of(ref, "doc-everything.docx", 4)
    texts = found["page_texts"]
    # each section's first heading or paragraph, never its running header
    assert len(texts) == 5
    assert texts[1] == "SENT-H1-ALPHA"
    assert texts[4] == "SENT-H1-GAMMA"
    assert not any("HEADER" in text for text in texts)
