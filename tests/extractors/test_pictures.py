"""Pictures as documents (extractors/picture): every suffix listed and read, a page a TIFF
frame, the picture as an image element whose bytes a Level 3 read serves, EXIF facts with the
orientation applied, a photo's location left out unless asked, a picture without text one
image element, pictures pending in the server's extraction jobs, and bad pictures refused
clearly."""

from __future__ import annotations

import io
import json
import struct
import zipfile
import zlib
from pathlib import Path

import pytest
from PIL import Image

from dpe_server.catalog.catalog import Catalog
from dpe_server.catalog.folder import scan
from dpe_server.extractors import DEFAULT_LIMITS, Limits, for_path, is_supported
from dpe_server.isolation.backends import ThreadBackend
from dpe_server.isolation.client import InlineJobs, run_inline
from dpe_server.isolation.pictures import picture
from dpe_server.model.errors import CorruptError, ExtractionError, TooLargeError, UnsupportedError
from dpe_server.model.tree import Document
from dpe_server.read.reader import Reader
from fixtures.builders import pictures

OFF = Limits(ocr="off")
SUFFIXES = {".png": "PNG", ".jpg": "JPEG", ".jpeg": "JPEG", ".tif": "TIFF", ".tiff": "TIFF"}
SUFFIXES |= {".webp": "WEBP", ".bmp": "BMP", ".gif": "GIF"}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pictures")
    pictures.build(out)
    return out


def _extract(path: Path, limits: Limits = OFF) -> Document:
    extractor = for_path(path)
    assert extractor is not None
    with path.open("rb") as f:
        return extractor.extract(f, limits)


def test_every_picture_suffix_is_a_document_of_one_page(tmp_path: Path) -> None:
    for suffix, kind in SUFFIXES.items():
        Image.new("RGB", (64, 48), (200, 30, 30)).save(tmp_path / f"red{suffix}", kind)
    assert sorted(scan(tmp_path)) == sorted(f"red{s}" for s in SUFFIXES)
    for suffix in SUFFIXES:
        assert is_supported(f"x{suffix.upper()}")
        doc = _extract(tmp_path / f"red{suffix}")
        (page,) = doc.pages
        (image,) = page.elements
        assert image.category.value == "image"
        assert (image.content["width"], image.content["height"]) == (64, 48)
        assert str(image.content["mime_type"]).startswith("image/")


def test_a_gif_is_its_first_frame_a_tiff_every_frame_a_page(tmp_path: Path, built: Path) -> None:
    frames = [Image.new("P", (40, 30), i) for i in (1, 2, 3)]
    frames[0].save(tmp_path / "anim.gif", save_all=True, append_images=frames[1:])
    assert len(_extract(tmp_path / "anim.gif").pages) == 1
    fax = _extract(built / pictures.FAX)
    assert fax.properties.page_count == 3
    assert [p.elements[0].metadata for p in fax.pages] == [{"frame": 0}, {"frame": 1}, {"frame": 2}]
    assert [p.title for p in fax.pages] == ["Frame 1 of 3", "Frame 2 of 3", "Frame 3 of 3"]


def test_exif_facts_and_the_orientation_applied(built: Path) -> None:
    doc = _extract(built / pictures.PHOTO)
    assert doc.properties.extra == {
        "taken": "2025-06-01T09:30:00",
        "camera": "Fixture Optics FX-100",
        "orientation": 6,
    }
    (page,) = doc.pages
    # stored 640 × 480 on its side: served upright, as the camera meant it
    assert (page.metadata["width"], page.metadata["height"]) == (480, 640)
    assert (page.elements[0].content["width"], page.elements[0].content["height"]) == (480, 640)


async def _everything(root: Path, limits: Limits) -> str:
    """Every JSON the server gives of the folder's one document: Level 0, 1, 2, 3."""
    catalog = Catalog(root, "h", ThreadBackend(limits=limits), limits=limits)
    await catalog.start()
    reader = Reader(catalog, "h")
    (ref,) = [d.doc_ref for d in catalog.documents()]
    uris = ["dpe://h", f"dpe://h/{ref}", f"dpe://h/{ref}?depth=pages", f"dpe://h/{ref}/pages/0"]
    uris.append(f"dpe://h/{ref}/elements/p0-img1")
    return "\n".join([body.text or "" for uri in uris for body in await reader.read(uri)])


@pytest.mark.anyio
async def test_a_photos_location_is_left_out_unless_asked(built: Path, tmp_path: Path) -> None:
    (tmp_path / "gps").mkdir()
    (tmp_path / "gps" / "photo.jpg").write_bytes((built / pictures.GPS_PHOTO).read_bytes())
    private = await _everything(tmp_path / "gps", OFF)
    assert "Fixture Optics FX-100" in private  # the other facts are there
    for leak in ('"location"', "latitude", "48.85", "2.294"):
        assert leak not in private
    shown = await _everything(tmp_path / "gps", Limits(ocr="off", keep_location=True))
    assert '"latitude": 48.8584' in shown
    assert '"longitude": 2.2945' in shown


@pytest.mark.parametrize("engine", ["tesseract", "rapidocr"])
def test_a_picture_with_no_text_is_one_image_element(built: Path, engine: str) -> None:
    from dpe_server.extractors.ocr.settings import chosen

    if chosen(engine) != engine:
        pytest.skip(f"{engine} is not installed (docs/ocr.md says how to install it)")
    (page,) = _extract(built / pictures.BLANK, Limits(ocr_engine=engine)).pages
    assert [e.category.value for e in page.elements] == ["image"]
    assert page.metadata["ocr"] is True
    assert str(page.metadata["ocr_engine"]).startswith(engine)


def test_the_picture_bytes_are_served_at_level_3(built: Path) -> None:
    with (built / pictures.PHOTO).open("rb") as f:
        found = picture(f, pictures.PHOTO, {})
    assert found == ((built / pictures.PHOTO).read_bytes(), "image/jpeg")  # as stored
    with (built / pictures.FAX).open("rb") as f:
        found = picture(f, pictures.FAX, {"frame": 2})
    assert found is not None
    assert found[1] == "image/png"
    frame = Image.open(io.BytesIO(found[0]))
    assert frame.size == (850, 1100)


@pytest.mark.anyio
async def test_a_level_3_read_of_the_image_element_gives_its_bytes(built: Path) -> None:
    catalog = Catalog(built, "h", ThreadBackend(limits=OFF), limits=OFF)
    await catalog.start()
    reader = Reader(catalog, "h")
    ref = next(d.doc_ref for d in catalog.documents() if d.doc_ref.startswith("picture-fax"))
    bodies = await reader.read(f"dpe://h/{ref}/elements/p1-img1")
    assert [b.mime_type for b in bodies] == ["application/json", "image/png"]
    assert json.loads(bodies[0].text or "")["content"]["description"] == "Frame 2 of 3"


def test_extraction_jobs_leave_pictures_pending_for_a_job_of_their_own(built: Path) -> None:
    from dpe_server.extractors.ocr.states import later

    jobs = InlineJobs(Limits(ocr_engine="tesseract"))
    doc = run_inline(jobs.extract(built, pictures.FAX))
    expected = later("tesseract")  # "unavailable" without Tesseract: nothing would change it
    assert [p.metadata.get("ocr") for p in doc.pages] == [expected] * 3
    assert all(len(p.elements) == 1 for p in doc.pages)
    if expected != "pending":
        return
    page = run_inline(jobs.recognise(built, pictures.FAX, 1))
    assert page is not None
    assert page.metadata["ocr"] is True
    assert "The invoice follows under separate cover." in [
        e.content.get("text") for e in page.elements
    ]


def _chunk(kind: bytes, data: bytes) -> bytes:
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))


def _png_header(width: int, height: int) -> bytes:
    """A PNG that says it is `width` × `height` pixels, with next to no pixel data."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    idat = _chunk(b"IDAT", zlib.compress(b"\0" * 64))
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + idat + _chunk(b"IEND", b"")


def test_bad_pictures_are_refused_clearly(tmp_path: Path) -> None:
    (tmp_path / "bomb.png").write_bytes(_png_header(40_000, 40_000))
    (tmp_path / "noise.jpg").write_bytes(b"this is not a picture at all" * 10)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("a.txt", "x")
    (tmp_path / "archive.gif").write_bytes(buf.getvalue())
    cases = {"bomb.png": TooLargeError, "noise.jpg": CorruptError, "archive.gif": UnsupportedError}
    for name, error in cases.items():
        with pytest.raises(ExtractionError) as raised:
            run_inline(InlineJobs(OFF).extract(tmp_path, name))
        assert type(raised.value) is error, (name, raised.value)
    assert "over the limit of 100 megapixels" in str(_error(tmp_path, "bomb.png"))
    assert "not a picture that can be read" in str(_error(tmp_path, "noise.jpg"))


def _error(root: Path, rel: str) -> ExtractionError:
    with pytest.raises(ExtractionError) as raised:
        run_inline(InlineJobs(OFF).extract(root, rel))
    return raised.value


def test_default_limits_read_pictures_without_error(built: Path) -> None:
    for name in (pictures.PHOTO, pictures.BLANK):
        doc = _extract(built / name, DEFAULT_LIMITS)
        assert doc.pages[0].elements[0].category.value == "image"


def test_the_command_line_keeps_a_location_only_when_asked(
    built: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from dpe_server.cli.command import main

    folder = tmp_path / "photos"
    folder.mkdir()
    (folder / "trip.jpg").write_bytes((built / pictures.GPS_PHOTO).read_bytes())
    read = ["read", str(folder), "dpe://local.dpe.photos", "--no-cache", "--ocr", "off"]
    assert main(read) == 0
    assert "latitude" not in capsys.readouterr().out
    assert main([*read, "--keep-location"]) == 0
    assert '"latitude": 48.8584' in capsys.readouterr().out


def test_an_engine_that_cannot_read_a_language_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from dpe_server.cli.command import main
    from dpe_server.extractors.ocr.settings import chosen

    if chosen("rapidocr") != "rapidocr":
        pytest.skip("rapidocr is not installed (pip install -e '.[ocr]')")
    argv = ["read", str(tmp_path), "dpe://x", "--ocr-engine", "rapidocr", "--ocr-languages", "ar"]
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert "RapidOCR reads en, zh only, not ar" in str(exited.value.code)
