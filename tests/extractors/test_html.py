"""Web pages (.html, .htm, .mhtml): the trees of the fixtures written as a browser, Word and
Chrome's web archive write them, the picture blobs, the charset, and the bounds (a page
over the size cap, nesting past libxml2's depth, entities never expanded)."""

from __future__ import annotations

import dataclasses
import io
import time
from pathlib import Path

import pytest

from dpe_server.extractors import DEFAULT_LIMITS, for_path
from dpe_server.extractors.html.source import load
from dpe_server.isolation.pictures import picture
from dpe_server.model.errors import TooLargeError
from dpe_server.model.tree import Category, Document, Element, one_line
from fixtures.builders import web


def _read(path: Path) -> Document:
    extractor = for_path(path)
    assert extractor is not None
    with path.open("rb") as f:
        return extractor.extract(f, DEFAULT_LIMITS)


def _html(data: bytes, name: str = "page.html") -> Document:
    extractor = for_path(name)
    assert extractor is not None
    return extractor.extract(io.BytesIO(data), DEFAULT_LIMITS)


def _all(doc: Document, category: Category) -> list[Element]:
    return [e for p in doc.pages for e in p.elements if e.category is category]


def _texts(doc: Document) -> str:
    return "\n".join(str(e.content.get("text", "")) for p in doc.pages for e in p.elements)


def test_browser_saved_page(fixture_dir: Path) -> None:
    doc = _read(fixture_dir / web.BROWSER)
    props = doc.properties
    assert props.title == "WB-Title Field notes on river otters"  # <title> before og:title
    assert props.summary == "WB-Summary Notes from a season of watching river otters."
    assert props.keywords == ("otters", "rivers", "field notes")
    assert props.extra["language"] == "en"
    assert props.extra["encoding"] == "utf-8"
    # one <h1>: one page, its title the heading; the banner and navigation open it
    assert [p.title for p in doc.pages] == ["WB-Heading River otters in winter"]
    text = _texts(doc)
    for never in ("WBscriptvariable", "WB-style-rule", "WB-Hidden", "WB-AriaHidden", "secret"):
        assert never not in text
    headers = _all(doc, Category.HEADER)
    assert [h.content["kind"] for h in headers] == ["cookie_banner", "banner"]
    assert "About us" in headers[1].content["text"]
    assert [f.content["text"] for f in _all(doc, Category.FOOTER)] == [
        "WB-Footer © 2026 Otter Watch"
    ]
    headings = [(h.content["level"], h.content["text"]) for h in _all(doc, Category.HEADING)]
    assert headings == [
        (1, "WB-Heading River otters in winter"),
        (2, "What they eat"),
        (2, "Sightings"),
    ]
    links = {e.content["text"]: e.content["url"] for e in _all(doc, Category.LINK)}
    assert links["the encyclopedia"] == "https://en.wikipedia.org/wiki/River_otter"
    assert links["About us"] == "/about/"
    lists = _all(doc, Category.LIST)
    assert lists[0].content["items"] == [
        {"text": "Fish", "level": 0},
        {"text": "WB-Nested trout", "level": 1},
        {"text": "Perch", "level": 1},
        {"text": "Crayfish", "level": 0},
    ]
    assert lists[1].content["ordered"] is True
    assert lists[1].content["start"] == 3
    table, nested = _all(doc, Category.TABLE)  # the second nested in a cell of the first
    assert table.content["headers"] == ["Month", "Place", ""]
    assert table.content["rows"] == [
        ["January", "North bank", "WB-Cell weir"],
        ["", "South bank", f"Bridge\n[table {nested.element_id}]"],
    ]
    assert nested.content["rows"] == [["WB-NestedCell dawn", "3"]]
    assert table.metadata["merged_cells"] == ["B1:C1", "A2:A3"]
    assert "WB-TableCaption Sightings by month" in text
    (code,) = _all(doc, Category.CODE)
    assert code.content["language"] == "python"
    assert code.content["text"].splitlines()[1] == "print(count)"
    data_image, remote = _all(doc, Category.IMAGE)
    assert data_image.content == {
        "description": "WB-Alt An otter on the ice",
        "mime_type": "image/png",
        "width": 2,
        "height": 2,
    }
    assert remote.metadata == {"url": "https://images.example.com/otter-remote.jpg"}
    assert "WB-Caption An otter resting on the ice." in text
    (form,) = _all(doc, Category.FORM)
    fields = {f["name"]: f for f in form.content["fields"]}
    assert set(fields) == {"email", "weekly", "region", ""}  # the hidden token is left out
    assert fields["email"]["label"] == "Your e-mail"
    assert fields["weekly"]["checked"] is True
    assert fields["weekly"]["value"] == "on"  # a box's on state, as content.md says
    assert fields["weekly"]["label"] == "Weekly digest"
    assert fields["region"]["options"] == ["North", "South"]
    assert fields["region"]["value"] == "South"
    assert [s.content["kind"] for s in _all(doc, Category.SEPARATOR)] == ["rule"]


def test_data_uri_picture_is_served_and_a_remote_one_never_fetched(fixture_dir: Path) -> None:
    doc = _read(fixture_dir / web.BROWSER)
    data_image, remote = _all(doc, Category.IMAGE)
    with (fixture_dir / web.BROWSER).open("rb") as f:
        assert picture(f, web.BROWSER, data_image.metadata) == (web.png(2, 2), "image/png")
    with (fixture_dir / web.BROWSER).open("rb") as f:
        assert picture(f, web.BROWSER, remote.metadata) is None


def test_word_saved_web_page(fixture_dir: Path) -> None:
    doc = _read(fixture_dir / web.WORD)
    assert doc.properties.extra["encoding"] == "cp1252"
    assert doc.properties.title == "WB-WordTitle Quarterly report"
    assert [p.title for p in doc.pages] == ["WB-WordHeading Summary", "Figures"]
    text = _texts(doc)
    assert "the café opened, and the team’s “new” process worked." in text
    assert "Jane Doe" not in text  # Word's properties, in a conditional comment
    (listing,) = _all(doc, Category.LIST)  # Word's list paragraphs, their bullets left out
    assert listing.content == {
        "ordered": False,
        "items": [
            {"text": "WB-WordList first point", "level": 0},
            {"text": "Second point", "level": 0},
        ],
    }
    (table,) = _all(doc, Category.TABLE)
    assert table.content["headers"] == ["Region", "Revenue"]
    assert table.content["rows"] == [["WB-WordCell North", "1 200 €"]]
    (image,) = _all(doc, Category.IMAGE)  # the VML twin in a conditional comment is not one
    assert image.content["description"] == "WB-WordAlt Revenue chart"
    assert image.metadata == {"file": "web-word-saved_files/image002.png"}  # served beside it


def test_web_archive(fixture_dir: Path) -> None:
    doc = _read(fixture_dir / web.ARCHIVE)
    assert doc.properties.title == "WB-ArchiveTitle Saved recipe"
    assert [p.title for p in doc.pages] == ["WB-ArchiveHeading Lemon tart", "Method"]
    assert "été 2026" in _texts(doc)  # quoted-printable UTF-8
    (image,) = _all(doc, Category.IMAGE)
    assert image.metadata == {"part": "https://recipes.example.com/tart.png"}
    with (fixture_dir / web.ARCHIVE).open("rb") as f:
        found = picture(f, web.ARCHIVE, image.metadata)
    assert found == (web.png(3, 2, (240, 200, 40)), "image/png")
    steps = _all(doc, Category.LIST)[0].content["items"]
    assert steps[1]["text"] == "WB-ArchiveStep Fill and chill."


@pytest.mark.parametrize(
    ("data", "encoding", "text"),
    [
        (
            "<meta charset='shift_jis'><p>日本語の文章</p>".encode("shift_jis"),
            "shift_jis",
            "日本語の文章",
        ),
        (b"\xef\xbb\xbf<p>caf\xc3\xa9</p>", "utf-8", "café"),
        ("<p>café crème</p>".encode("utf-16"), "utf-16", "café crème"),
        ("<p>café crème</p>".encode("utf-16-le"), "utf-16-le", "café crème"),
        (
            "<p>Grüße aus Köln, schöne Straße</p>".encode("cp1252"),
            "cp1250",  # detected: the same letters as cp1252
            "Grüße aus Köln, schöne Straße",
        ),
    ],
)
def test_charset_from_the_mark_the_page_or_detection(data: bytes, encoding: str, text: str) -> None:
    doc = _html(data)
    assert doc.properties.extra["encoding"] == encoding
    assert _texts(doc) == text


def test_pages_at_top_level_sections_and_continuations() -> None:
    sections = "".join(f"<section><p>Part {i} words</p></section>" for i in range(3))
    doc = _html(f"<body>{sections}</body>".encode())
    assert len(doc.pages) == 3  # no heading: a page per top-level section
    long = "".join(f"<p>{'word ' * 100}{i}</p>" for i in range(250))  # 125,000 characters
    doc = _html(f"<h1>Long</h1>{long}".encode())
    assert [p.title for p in doc.pages] == ["Long", "Long (cont. 2)", "Long (cont. 3)"]
    assert max(len(p.elements) for p in doc.pages) <= 120  # 60,000 characters a page


def test_a_paragraph_summary_is_its_text_on_one_line_cut() -> None:
    """The walk's summaries are `one_line`'s (`PageBuilder.put` keeps them as they are): a
    short plain paragraph is its own, a long one is cut, one with a `<br>` or a line
    separator is on one line."""
    short, long = "Plain words here", "word " * 100
    html = f"<p>{short}</p><p>{long}</p><p>one<br>two</p><p>a\u2028b \u3000 c</p>"
    texts = _all(_html(html.encode()), Category.TEXT)
    assert [e.content["text"] for e in texts] == [
        short,
        long.strip(),
        "one\ntwo",
        "a\u2028b \u3000 c",
    ]
    assert [e.summary for e in texts] == [one_line(str(e.content["text"])) for e in texts]
    assert texts[0].summary is texts[0].content["text"]
    assert texts[1].summary.endswith("…")


def test_deep_nesting_is_a_bounded_error() -> None:
    deep = b"<html><body>" + b"<div>" * 100_000 + b"deep" + b"</div>" * 100_000 + b"</body>"
    start = time.monotonic()
    with pytest.raises(TooLargeError, match="nests its elements more than 256 deep"):
        _html(deep)
    assert time.monotonic() - start < 30


def test_entities_of_an_xhtml_page_are_never_expanded() -> None:
    laughs = "".join(f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">' for i in range(1, 10))
    page = (
        '<?xml version="1.0"?><!DOCTYPE html [<!ENTITY lol0 "lol">' + laughs + "]>"
        '<html xmlns="http://www.w3.org/1999/xhtml"><body><p>&lol9;</p><p>kept</p></body></html>'
    ).encode()
    doc = _html(page, "laughs.xhtml")
    text = _texts(doc)
    assert "lollol" not in text
    assert "kept" in text
    assert len(text) < 1000


def test_a_file_over_the_size_cap_is_too_large() -> None:
    limits = dataclasses.replace(DEFAULT_LIMITS, max_part_bytes=1000)
    with pytest.raises(TooLargeError, match="2,003 bytes, over 1,000"):
        load(io.BytesIO(b"<p>" + b"x" * 2000), limits)


@pytest.mark.parametrize("name", ["web-browser-saved.html", "epub3-nav.epub"])
def test_a_page_is_walked_with_the_cyclic_collector_paused(
    fixture_dir: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """The walk builds no reference cycle, so the collector is paused while it runs (it
    walked every object the walk built again and again: a fifth of the extraction of a 5 MB
    page, issue 34), and runs as before once the page or the book is read."""
    import gc

    from dpe_server.extractors.html.walk import Walker

    enabled: list[bool] = []
    flush = Walker.flush

    def flush_seen(self: Walker) -> None:
        enabled.append(gc.isenabled())
        flush(self)

    monkeypatch.setattr(Walker, "flush", flush_seen)
    assert gc.isenabled()
    doc = _read(fixture_dir / name)
    assert doc.pages
    assert enabled
    assert not any(enabled)
    assert gc.isenabled()
