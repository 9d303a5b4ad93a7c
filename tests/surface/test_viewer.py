"""`dpe-server view` over HTTP, as a browser asks it: the list of documents with their state, a
pdf page drawn by PDFium with every element's box where its bbox says (the drawing's dark
pixels inside the text boxes), an element's URI, JSON and Markdown, the search, a reload after
the folder changed; bound to loopback, refusing another Host, reading nothing outside the
folder."""

from __future__ import annotations

import io
import json
import re
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from fixtures.goldens import EXPECTED, HOST
from tests.e2e.harness import wait_for
from tests.surface.viewer_server import Viewer, served_viewer

PDF = "pdf-text-d74061"
"""fixtures/pdf_text.pdf: six pages of text with bboxes."""
SCALE = 1.5


@pytest.fixture(scope="module")
def viewer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Viewer]:
    with served_viewer(tmp_path_factory) as running:
        yield running


def test_the_list_shows_every_document_with_its_state(viewer: Viewer) -> None:
    catalog = json.loads((EXPECTED / "catalog.json").read_text("utf-8"))

    page = viewer.settled()
    assert page.count("<tr class='document'>") == catalog["total_count"]
    assert f"dpe://{HOST}: {catalog['total_count']} documents" in page
    errors = [d for d in catalog["documents"] if "error" in d]
    assert len(errors) == 2
    for doc in errors:  # the error with its reason, escaped
        assert f"encrypted: {doc['error']['message'][:40]}" in page
    assert page.count("class='ok'") == catalog["total_count"] - 2


def _elements(page: dict[str, Any]) -> list[dict[str, Any]]:
    ref = page["doc_ref"]
    folder = EXPECTED / "pdf" / "pdf_text" / "elements"
    assert ref == PDF
    return [
        json.loads((folder / f"{e['element_id']}.json").read_text("utf-8"))
        for e in page["elements"]
    ]


def test_a_pdf_page_is_drawn_with_every_element_box_over_its_text(viewer: Viewer) -> None:
    from PIL import Image

    golden = json.loads((EXPECTED / "pdf" / "pdf_text" / "pages" / "0.json").read_text("utf-8"))
    html = viewer.text(f"/doc/{PDF}/pages/0")
    status, png, kind = viewer.get(f"/doc/{PDF}/pages/0/picture")
    assert (status, kind) == (200, "image/png")
    image = Image.open(io.BytesIO(png)).convert("L")
    assert image.size == (round(golden["width"] * SCALE), round(golden["height"] * SCALE))
    boxes = dict(
        re.findall(
            r"data-uri='[^']*/elements/([^']+)' data-category='[^']*' title='[^']*' "
            r"style='([^']*)'",
            html,
        )
    )
    elements = _elements(golden)
    assert len(boxes) == len(elements) == 8
    for element in elements:
        x0, y0, x1, y1 = element["metadata"]["bbox"]
        style = boxes[element["element_id"]]
        left, top, width, height = (float(v) for v in re.findall(r"[\d.]+(?=px)", style))
        assert (left, width) == (
            pytest.approx(x0 * SCALE, abs=0.1),
            pytest.approx((x1 - x0) * SCALE, abs=0.1),
        )
        assert top == pytest.approx((golden["height"] - y1) * SCALE, abs=0.1)
        assert height == pytest.approx((y1 - y0) * SCALE, abs=0.1)
        inside = image.crop((int(left), int(top), int(left + width), int(top + height)))
        assert inside.getextrema()[0] < 128, element["element_id"]  # its text is drawn there
    margin = image.crop((0, 0, image.size[0], 60))  # above every box: nothing drawn
    assert margin.getextrema()[0] > 200


def test_choosing_an_element_gives_its_uri_json_and_markdown(viewer: Viewer) -> None:
    uri = f"dpe://{HOST}/{PDF}/elements/p0-txt1"
    body = json.loads(viewer.text(f"/element?uri={quote(uri, safe='')}"))
    assert body["uri"] == uri
    assert json.loads(body["json"]) == json.loads(
        (EXPECTED / "pdf" / "pdf_text" / "elements" / "p0-txt1.json").read_text("utf-8")
    )
    expected_md = (EXPECTED / "pdf" / "pdf_text" / "elements" / "p0-txt1.md").read_text("utf-8")
    assert body["markdown"].strip() == expected_md.strip()


def test_the_search_box_uses_the_server_search(viewer: Viewer) -> None:
    page = viewer.text("/search?q=" + quote("harbor report"))
    assert re.search(r"<h1>\d+ found for harbor report</h1>", page)
    assert f"/doc/{PDF}/pages/0?element=" in page
    status, body, _ = viewer.get("/search?q=" + quote("   "))
    assert status == 400
    assert b"The query is empty" in body


def test_another_host_is_refused_and_loopback_names_are_served(viewer: Viewer) -> None:
    for host in (f"evil.example:{viewer.port}", "127.0.0.1", f"10.0.0.1:{viewer.port}"):
        status, body, _ = viewer.get("/", host=host)
        assert status == 421, host
        assert b"127.0.0.1 only" in body
    assert viewer.get("/changes", host=f"localhost:{viewer.port}")[0] == 200


def test_the_viewer_listens_on_loopback_only(viewer: Viewer) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.255.255.255", 1))  # no packet is sent: picks an interface
            address = probe.getsockname()[0]
        except OSError:
            address = "127.0.0.1"
    if address.startswith("127."):
        pytest.skip("this machine has no address other than loopback")
    with (
        pytest.raises(ConnectionRefusedError),
        socket.create_connection((address, viewer.port), timeout=5),
    ):
        pass


@pytest.mark.parametrize(
    "path",
    [
        "/doc/..%2F..%2Fetc%2Fpasswd",
        "/doc/..%2F..%2Fetc%2Fpasswd/pages/0/picture",
        "/doc/%2Fetc%2Fpasswd/pages/0",
        "/element?uri=" + quote("dpe://local.dpe.fixtures/../../etc/passwd", safe=""),
        "/element?uri=" + quote("dpe://other.host/pdf-text-d74061/elements/p0-txt1", safe=""),
        "/element?uri=" + quote("file:///etc/passwd", safe=""),
        "/doc/csv-cp1252-556837/pages/0/picture",  # not a pdf: no picture, the tree alone
    ],
)
def test_no_request_reads_outside_the_folder(viewer: Viewer, path: str) -> None:
    status, body, _ = viewer.get(path)
    assert status in (400, 404), (path, status)
    assert b"root:" not in body


def test_a_change_in_the_folder_is_told_to_the_open_pages(viewer: Viewer) -> None:
    before = json.loads(viewer.text("/changes"))["changes"]
    shutil.copyfile(viewer.folder / "pdf_text.pdf", viewer.folder / "added copy.pdf")
    # the count the open pages poll grows, and the list they reload shows the new file
    wait_for(lambda: json.loads(viewer.text("/changes"))["changes"] > before, "the change", 60)
    wait_for(lambda: "/doc/added-copy-" in viewer.text("/"), "the new file listed", 60)


def _ref_of(viewer: Viewer, stem: str) -> str | None:
    """The doc_ref the list links for a file of this stem, once listed."""
    found = re.search(rf"/doc/({re.escape(stem)}-[0-9a-f]+)'", viewer.text("/"))
    return found.group(1) if found else None


def _count(viewer: Viewer, ref: str) -> int:
    count: int = json.loads(viewer.text(f"/changes?doc={ref}"))["changes"]
    return count


def test_an_open_page_is_told_of_its_own_documents_changes_alone(viewer: Viewer) -> None:
    """A document's page reloads when that document changes or goes, not when another does
    (every announcement reloaded every open page, dropping the element chosen on it)."""
    shutil.copyfile(viewer.folder / "pdf_text.pdf", viewer.folder / "watched.pdf")
    ref = wait_for(lambda: _ref_of(viewer, "watched"), "watched.pdf listed", 60)
    viewer.text(f"/doc/{ref}/pages/0")  # read: extracted, its announcements made
    mine, everyone = _count(viewer, ref), json.loads(viewer.text("/changes"))["changes"]
    shutil.copyfile(viewer.folder / "pdf_text.pdf", viewer.folder / "another.pdf")
    other = wait_for(lambda: _ref_of(viewer, "another"), "another.pdf listed", 60)
    viewer.text(f"/doc/{other}/pages/0")
    assert json.loads(viewer.text("/changes"))["changes"] > everyone  # the list's count grew
    assert _count(viewer, ref) == mine  # the watched page's did not
    shutil.copyfile(viewer.folder / "pdf_rtl.pdf", viewer.folder / ".watched.partial")
    (viewer.folder / ".watched.partial").replace(viewer.folder / "watched.pdf")
    wait_for(lambda: _count(viewer, ref) > mine, "the watched document's change", 60)
    (viewer.folder / "watched.pdf").unlink()
    wait_for(lambda: _count(viewer, ref) == -1, "the watched document gone", 60)


def test_a_page_waiting_for_ocr_says_so() -> None:
    from dpe_server.surface.viewer_html import document_html

    pages = [
        {"page_index": 0, "title": "Scan", "element_count": 1, "ocr": "pending"},
        {"page_index": 1, "title": "Typed", "element_count": 3},
    ]
    html = document_html({"doc_ref": "d-1", "title": "T", "uri": "dpe://h/d-1", "pages": pages})
    assert html.count("OCR pending") == 1
    assert html.index("OCR pending") < html.index("Typed")


def test_ctrl_c_stops_the_viewer_at_once(tmp_path: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "dpe_server", "view", str(tmp_path), "--no-browser", "--no-cache"],
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        assert "(Ctrl-C to stop)" in process.stderr.readline()  # listening
        process.send_signal(signal.SIGINT)
        assert process.wait(10) == 0
    finally:
        process.kill()
        process.wait()
        if process.stderr is not None:
            process.stderr.close()
