"""Picture bytes for Level 3 reads of image elements, read from the file when asked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpe_server.backends import ThreadBackend
from dpe_server.catalog import Catalog
from dpe_server.model import Category, Element
from dpe_server.reader import Reader

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _images(folder: Path, prefix: str) -> list[tuple[str, list[tuple[str, int]]]]:
    catalog = Catalog(folder, "h", ThreadBackend())
    await catalog.start()
    reader = Reader(catalog, "h")
    ref = next(d.doc_ref for d in catalog.documents() if d.doc_ref.startswith(prefix))
    out = []
    for info in await catalog.page_infos(ref, "u"):
        page = json.loads(
            (await reader.read(f"dpe://h/{ref}/pages/{info.page_index}"))[0].text or ""
        )
        for el in page["elements"]:
            if el["category"] == "image":
                bodies = await reader.read(f"dpe://h/{ref}/elements/{el['element_id']}")
                out.append((el["element_id"], [(b.mime_type, len(b.blob or "")) for b in bodies]))
    return out


async def test_pdf_picture_bytes_come_as_png(fixture_dir: Path) -> None:
    pytest.importorskip("PIL", reason="pdf pictures other than JPEG are converted with Pillow")
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


def test_non_image_elements_have_no_bytes(tmp_path: Path) -> None:
    from dpe_server.images import read_image

    el = Element("p0-txt1", Category.TEXT, "t", {"text": "x"}, {"part": "word/document.xml"})
    assert read_image(tmp_path, "a.docx", el) is None


def test_missing_file_gives_no_bytes_not_an_error(tmp_path: Path) -> None:
    from dpe_server.images import read_image

    el = Element("p0-img1", Category.IMAGE, "i", {}, {"part": "ppt/media/image1.png"})
    assert read_image(tmp_path, "gone.pptx", el) is None
