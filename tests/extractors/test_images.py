"""Picture bytes for Level 3 reads of image elements, read from the file when asked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpe_server.catalog.catalog import Catalog
from dpe_server.isolation.backends import ThreadBackend
from dpe_server.isolation.pictures import picture
from dpe_server.model.tree import Category
from dpe_server.read.reader import Reader

pytestmark = pytest.mark.anyio


async def _images(folder: Path, prefix: str) -> list[tuple[str, list[tuple[str, int]]]]:
    catalog = Catalog(folder, "h", ThreadBackend())
    await catalog.start()
    reader = Reader(catalog, "h")
    ref = next(d.doc_ref for d in catalog.documents() if d.doc_ref.startswith(prefix))
    out = []
    for info in await catalog.page_infos(ref):
        page = json.loads(
            (await reader.read(f"dpe://h/{ref}/pages/{info.page_index}"))[0].text or ""
        )
        for el in page["elements"]:
            if el["category"] == "image":
                bodies = await reader.read(f"dpe://h/{ref}/elements/{el['element_id']}")
                out.append((el["element_id"], [(b.mime_type, len(b.blob or "")) for b in bodies]))
    return out


async def test_pdf_picture_bytes_come_as_png(fixture_dir: Path) -> None:
    images = await _images(fixture_dir, "pdf-structure")
    assert images
    for _, bodies in images:
        assert bodies[0][0] == "application/json"
        assert bodies[1][0] == "image/png"
        assert bodies[1][1] > 0


async def test_pptx_picture_bytes(fixture_dir: Path) -> None:
    images = await _images(fixture_dir, "deck-everything")
    showable = [b for _, b in images if len(b) == 2]
    assert showable
    assert all(b[1][0] in {"image/png", "image/jpeg", "image/gif", "image/webp"} for b in showable)


async def test_non_image_elements_have_no_bytes(fixture_dir: Path) -> None:
    catalog = Catalog(fixture_dir, "h", ThreadBackend())
    await catalog.start()
    reader = Reader(catalog, "h")
    ref = next(d.doc_ref for d in catalog.documents() if d.doc_ref.startswith("deck-everything"))
    bodies = await reader.read(f"dpe://h/{ref}/elements/p0-h1")
    assert [b.mime_type for b in bodies] == ["application/json"]


def test_a_part_that_is_no_picture_gives_no_bytes(fixture_dir: Path) -> None:
    with (fixture_dir / "deck-everything.pptx").open("rb") as f:
        assert picture(f, "deck-everything.pptx", {"part": "ppt/presentation.xml"}) is None


def test_an_unreadable_file_gives_no_bytes_not_an_error(tmp_path: Path) -> None:
    broken = tmp_path / "broken.pptx"
    broken.write_bytes(b"PK\x03\x04 not really a zip")
    with broken.open("rb") as f:
        assert picture(f, "broken.pptx", {"part": "ppt/media/image1.png"}) is None


async def test_missing_file_gives_no_picture_in_the_read(fixture_dir: Path, tmp_path: Path) -> None:
    import shutil

    shutil.copy(fixture_dir / "deck-everything.pptx", tmp_path / "deck.pptx")
    catalog = Catalog(tmp_path, "h", ThreadBackend())
    await catalog.start()
    reader = Reader(catalog, "h")
    ref = catalog.documents()[0].doc_ref
    images = [
        el.element_id
        for info in await catalog.page_infos(ref)
        for el in (await catalog.page(ref, info.page_index)).elements
        if el.category is Category.IMAGE
    ]
    image = images[0]
    (tmp_path / "deck.pptx").unlink()
    bodies = await reader.read(f"dpe://h/{ref}/elements/{image}")
    assert [b.mime_type for b in bodies] == ["application/json"]
