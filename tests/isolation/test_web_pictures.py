"""A saved web page's pictures beside it (`page_files/image002.png`, as a browser or Word
saves a page) are served at Level 3 through the same confined mechanism as Markdown's; a web
archive's pictures are its own parts, so a relative name it does not hold names no file of the
folder; a remote picture is named, never fetched."""

from __future__ import annotations

from pathlib import Path

from fixtures.builders import web
from fixtures.builders.markdown import png
from tests.isolation.test_markdown_pictures import _images, _served

PNG = png()


def test_the_word_saved_page_serves_the_picture_in_its_files_folder(fixture_dir: Path) -> None:
    images = _images(fixture_dir, web.WORD)
    assert images["WB-WordAlt Revenue chart"] == {"file": web.WORD_PICTURE}
    served = _served(fixture_dir, web.WORD, images["WB-WordAlt Revenue chart"])
    assert served == ((fixture_dir / web.WORD_PICTURE).read_bytes(), "image/png")


def test_a_page_serves_pictures_beside_it_and_nothing_outside_the_folder(tmp_path: Path) -> None:
    (tmp_path / "site" / "page_files").mkdir(parents=True)
    (tmp_path / "site" / "page_files" / "otter.png").write_bytes(PNG)
    (tmp_path / "outside.png").write_bytes(PNG)
    (tmp_path / "site" / "page.html").write_text(
        "<html><body><h1>Otters</h1>"
        '<img src="page_files/otter.png" alt="Beside">'
        '<img src="page_files/otter%2Epng?v=1" alt="Escaped">'
        '<img src="../../outside.png" alt="Above">'
        '<img src="https://example.com/otter.png" alt="Remote">'
        '<img src="missing.png" alt="Missing">'
        "</body></html>"
    )
    images = _images(tmp_path, "site/page.html")
    assert images["Beside"] == {"file": "page_files/otter.png"}
    assert _served(tmp_path, "site/page.html", images["Beside"]) == (PNG, "image/png")
    assert _served(tmp_path, "site/page.html", images["Escaped"]) == (PNG, "image/png")
    assert _served(tmp_path, "site/page.html", images["Above"]) is None
    assert images["Remote"] == {"url": "https://example.com/otter.png"}
    assert _served(tmp_path, "site/page.html", images["Remote"]) is None
    assert _served(tmp_path, "site/page.html", images["Missing"]) is None


def test_a_web_archive_names_no_file_of_the_folder(tmp_path: Path) -> None:
    (tmp_path / "otter.png").write_bytes(PNG)
    page = '<html><body><h1>Otters</h1><img src="otter.png" alt="Relative"></body></html>'
    (tmp_path / "saved.mhtml").write_text(
        "From: <Saved by Blink>\r\nSubject: Otters\r\nMIME-Version: 1.0\r\n"
        'Content-Type: multipart/related; type="text/html"; boundary="B"\r\n\r\n'
        "--B\r\nContent-Type: text/html\r\nContent-Location: https://example.com/\r\n\r\n"
        f"{page}\r\n--B--\r\n"
    )
    images = _images(tmp_path, "saved.mhtml")
    assert images["Relative"] == {"url": "otter.png"}
    assert _served(tmp_path, "saved.mhtml", images["Relative"]) is None
