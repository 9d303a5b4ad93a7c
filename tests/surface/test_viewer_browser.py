"""`dpe-server view` in headless Chromium (Debian's `chromium`, driven by Playwright for
Python with `executable_path`; skipped, saying why, without either): the list, a pdf page with
its boxes where its elements' bboxes say (the screenshot's pixels on each box's border are the
category's colour), an office page drawn by LibreOffice, choosing an element, the search, and
a reload after a file changed. Each step's screenshot is saved under the run's temporary
folder (the path is printed)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dpe_server.surface.viewer_html import COLOURS, OTHER
from fixtures.goldens import EXPECTED, HOST
from tests.surface.viewer_server import Viewer, served_viewer

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
"""As Chromium is started on these machines: no network of its own (docs/testing.md)."""
PDF = "pdf-text-d74061"
DECK = "deck-everything-feeb87"
SCALE = 1.5

pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason="no chromium (Debian's package `chromium`)"),
]


@pytest.fixture(scope="module")
def viewer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Viewer]:
    with served_viewer(tmp_path_factory) as running:
        running.settled()
        yield running


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("viewer-screenshots")
    print(f"viewer screenshots: {folder}")
    return folder


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright for Python")
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_api.sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile),
            executable_path=CHROMIUM,
            args=FLAGS,
            headless=True,
            viewport={"width": 1600, "height": 1300},
        )
        try:
            yield context
        finally:
            context.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    tab = browser.new_page()
    yield tab
    tab.close()


def test_the_list(viewer: Viewer, page: Any, shots: Path) -> None:
    catalog = json.loads((EXPECTED / "catalog.json").read_text("utf-8"))
    page.goto(viewer.url)
    rows = page.locator("tr.document")
    assert rows.count() == catalog["total_count"]
    assert page.locator("tr.document .error").count() == 2
    page.screenshot(path=str(shots / "list.png"), full_page=True)


def _pixel(image: Any, x: float, y: float) -> tuple[int, int, int]:
    r, g, b = image.getpixel((round(x), round(y)))[:3]
    return r, g, b


def _near(colour: tuple[int, int, int], wanted: tuple[int, int, int]) -> bool:
    return all(abs(c - w) <= 8 for c, w in zip(colour, wanted, strict=True))


def test_a_pdf_page_with_its_boxes(viewer: Viewer, page: Any, shots: Path) -> None:
    from PIL import Image

    golden = json.loads((EXPECTED / "pdf" / "pdf_text" / "pages" / "0.json").read_text("utf-8"))
    page.goto(f"{viewer.url}doc/{PDF}/pages/0")
    picture = page.locator(".page img")
    picture.evaluate("img => img.decode()")  # the picture is painted
    origin = picture.bounding_box()  # the page's drawing, inside its border
    path = shots / "pdf-page.png"
    page.screenshot(path=str(path), clip=origin, full_page=True)
    image = Image.open(path).convert("RGB")
    assert image.size == (round(golden["width"] * SCALE), round(golden["height"] * SCALE))
    for element in golden["elements"]:
        uri = f"dpe://{HOST}/{PDF}/elements/{element['element_id']}"
        stored = EXPECTED / "pdf" / "pdf_text" / "elements" / f"{element['element_id']}.json"
        x0, y0, x1, y1 = json.loads(stored.read_text("utf-8"))["metadata"]["bbox"]
        box = page.locator(f".box[data-uri='{uri}']").bounding_box()
        left, top = box["x"] - origin["x"], box["y"] - origin["y"]
        assert left == pytest.approx(x0 * SCALE, abs=1.5)
        assert top == pytest.approx((golden["height"] - y1) * SCALE, abs=1.5)
        assert box["width"] == pytest.approx((x1 - x0) * SCALE, abs=1.5)
        assert box["height"] == pytest.approx((y1 - y0) * SCALE, abs=1.5)
        # the box's left border (2 px, maybe astride two pixels), halfway down, is drawn in its
        # category's colour
        hex_colour = COLOURS.get(element["category"], OTHER)
        wanted = (int(hex_colour[1:3], 16), int(hex_colour[3:5], 16), int(hex_colour[5:7], 16))
        middle = top + box["height"] / 2
        border = [_pixel(image, int(left) + dx, middle) for dx in range(3)]
        assert any(_near(colour, wanted) for colour in border), (element["category"], border)


def test_an_office_page_drawn_by_libreoffice(viewer: Viewer, page: Any, shots: Path) -> None:
    """A pptx slide, drawn from LibreOffice's pdf export of the deck, its tree beside it (a
    pptx tree has no boxes); without LibreOffice, the sentence saying why."""
    from PIL import Image

    page.goto(f"{viewer.url}doc/{DECK}/pages/1")
    if shutil.which("soffice") is None:
        assert "needs LibreOffice" in page.locator("p.note").text_content()
        pytest.skip("LibreOffice (soffice) not installed: the page says so")
    page.wait_for_function(
        "() => { const i = document.querySelector('.page.office img');"
        " return i && i.complete && i.naturalWidth > 0; }",
        timeout=120_000,
    )
    picture = page.locator(".page.office img")
    origin = picture.bounding_box()
    assert (origin["width"], origin["height"]) == (720 * SCALE, 540 * SCALE)  # the slide
    page.screenshot(path=str(shots / "office-page.png"), full_page=True)
    path = shots / "office-slide.png"
    page.screenshot(path=str(path), clip=origin, full_page=True)
    darkest, lightest = Image.open(path).convert("L").getextrema()
    assert (darkest < 80, lightest > 200) == (True, True)  # drawn, not blank
    assert "Agenda SENT_TITLE_1" in page.locator("ul.tree").text_content()


def test_choosing_an_element(viewer: Viewer, page: Any, shots: Path) -> None:
    uri = f"dpe://{HOST}/{PDF}/elements/p0-txt2"
    page.goto(f"{viewer.url}doc/{PDF}/pages/0")
    page.locator(f".box[data-uri='{uri}']").click()
    page.wait_for_function(
        "uri => document.getElementById('uri').textContent === uri", arg=uri, timeout=30_000
    )
    assert json.loads(page.locator("#json").text_content())["element_id"] == "p0-txt2"
    assert "An important note." in page.locator("#markdown").text_content()
    assert page.locator(".box.chosen").count() == 1
    page.screenshot(path=str(shots / "element.png"), full_page=True)


def test_the_search(viewer: Viewer, page: Any, shots: Path) -> None:
    page.goto(viewer.url)
    page.fill("input[name=q]", "important note")
    page.press("input[name=q]", "Enter")
    page.wait_for_selector("#results li.result")
    page.screenshot(path=str(shots / "search.png"), full_page=True)
    page.locator(f"#results li.result a[href*='{PDF}']").first.click()
    page.wait_for_selector(".box.chosen")  # the page opens with the element found chosen
    assert "p0-txt2" in page.locator("#uri").text_content()


def test_a_reload_after_a_file_changed(viewer: Viewer, page: Any, shots: Path) -> None:
    page.goto(viewer.url)
    assert page.locator("a[href^='/doc/late-arrival-']").count() == 0
    page.wait_for_function("() => typeof seen !== 'undefined' && seen !== null")  # polling
    shutil.copyfile(viewer.folder / "doc-plain.docx", viewer.folder / "late arrival.docx")
    page.wait_for_selector("a[href^='/doc/late-arrival-']", timeout=60_000)  # reloaded
    page.screenshot(path=str(shots / "after-change.png"), full_page=True)
