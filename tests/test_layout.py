"""The shape of the package: one place knows a format (a format registered from a test is
served end to end), and the parts import one way, top to bottom."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import mcp_types as types
import pytest
from mcp import Client

from dpe_server.extractors import FORMATS, Extractor, Format, Limits, register
from dpe_server.isolation.backends import ThreadBackend
from dpe_server.model.tree import Category, Document, Page, PageBuilder, Properties
from dpe_server.surface.app import Settings, build_server

PACKAGE = Path(__file__).resolve().parents[1] / "dpe_server"

# ---- a throwaway format: plain text, a page per block of lines between blank lines ---------


def _blocks(f: BinaryIO) -> list[list[str]]:
    text = f.read().decode("utf-8")
    return [block.splitlines() for block in text.split("\n\n") if block.strip()]


def _page(index: int, lines: list[str]) -> Page:
    builder = PageBuilder(index)
    builder.add(Category.HEADING, lines[0], {"level": 1, "text": lines[0]})
    for line in lines[1:]:
        builder.add(Category.TEXT, line, {"text": line})
    return builder.build(lines[0])


def _probe(f: BinaryIO, limits: Limits) -> Properties:
    blocks = _blocks(f)
    return Properties(len(blocks), page_titles=tuple(b[0] for b in blocks))


def _extract(f: BinaryIO, limits: Limits) -> Document:
    pages = tuple(_page(i, lines) for i, lines in enumerate(_blocks(f)))
    return Document(Properties(len(pages)), pages)


TXT_EXTRACTOR = Extractor("txt", (".txt",), "1", _probe, _extract)
TXT = Format(
    name="txt",
    suffixes=(".txt",),
    kind_name="a text file",
    page_unit="block",
    paged=False,
    extractor=f"{__name__}:TXT_EXTRACTOR",
)


@pytest.fixture
def text_format() -> Iterator[None]:
    saved = dict(FORMATS)
    register(TXT)
    yield
    FORMATS.clear()
    FORMATS.update(saved)


@pytest.mark.anyio
@pytest.mark.usefixtures("text_format")
async def test_layout_a_format_registered_in_one_line_is_served_end_to_end(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "plan.txt").write_text("Harbor plan\nDredge the basin.\n\nBudget\nTwo million.\n")
    (folder / "ignored.log").write_text("not a format anyone registered")
    server = build_server(
        Settings(root=folder, host="h", watch=False, cache=False, backend=ThreadBackend())
    )
    async with Client(server, cache=None) as client:
        listed = (await client.list_resources()).resources
        assert [(r.meta or {}).get("file_type") for r in listed] == ["txt"]

        async def text(uri: str) -> str:
            item = (await client.read_resource(uri)).contents[0]
            assert isinstance(item, types.TextResourceContents)
            return item.text

        doc = json.loads(await text(listed[0].uri + "?depth=pages"))
        assert (doc["title"], doc["page_count"]) == ("Harbor plan", 2)
        assert [p["title"] for p in doc["pages"]] == ["Harbor plan", "Budget"]
        page = await text(listed[0].uri + "/pages/1?format=markdown")
        assert page == "# Budget\n\nTwo million.\n"
        element = json.loads(await text(listed[0].uri + "/elements/p0-txt1"))
        assert element["content"] == {"text": "Dredge the basin."}


# ---- the parts import one way --------------------------------------------------------------

LAYERS = [
    ["cli"],
    ["surface", "check"],
    ["read"],
    ["catalog", "views"],
    ["isolation"],
    ["extractors"],
    ["model"],
]
"""Each part of the package imports only parts of the layers below it (or its own)."""


def _imports() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).parts
        if len(parts) == 1:
            continue  # __init__ and __main__ of the package itself
        imported = re.findall(r"^\s*(?:from|import) dpe_server\.(\w+)", path.read_text(), re.M)
        found.setdefault(parts[0], set()).update(imported)
    return found


def test_layout_parts_import_only_the_parts_below_them() -> None:
    level = {part: i for i, layer in enumerate(LAYERS) for part in layer}
    assert set(_imports()) == set(level), "every subpackage has its place in LAYERS"
    upward = {
        (part, used)
        for part, uses in _imports().items()
        for used in uses
        if used != part and level[used] <= level[part]
    }
    assert upward == set()


def test_layout_cache_fingerprint_covers_every_module_of_the_tree_code(tmp_path: Path) -> None:
    """An edit or a move anywhere under the subpackages that make trees invalidates the cache."""
    import shutil

    from dpe_server.extractors import extractor_fingerprint

    copy = tmp_path / "dpe_server"
    for part in ("extractors", "model", "isolation", "views"):
        shutil.copytree(PACKAGE / part, copy / part, ignore=shutil.ignore_patterns("__pycache__"))
    before = extractor_fingerprint(copy)
    assert before == extractor_fingerprint(PACKAGE)
    nested = copy / "extractors" / "xlsx" / "cells.py"
    nested.write_text(nested.read_text() + "\n# edited\n")
    edited = extractor_fingerprint(copy)
    assert edited != before
    (copy / "extractors" / "ooxml" / "omml.py").rename(copy / "extractors" / "ooxml" / "math.py")
    assert extractor_fingerprint(copy) not in (before, edited)
    views = extractor_fingerprint(copy)
    (copy / "views" / "render.py").write_text("# rendering does not change trees\n")
    assert extractor_fingerprint(copy) == views
