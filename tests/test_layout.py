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


TXT_EXTRACTOR = Extractor(_probe, _extract)
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
    (folder / "ignored.nope").write_text("not a format anyone registered")
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


def _imports(package: Path = PACKAGE, name: str = "dpe_server") -> dict[str, set[str]]:
    """What each part of `package` (a subpackage, or a module of its own) imports of the others:
    `from {name}.x...` and `import {name}.x...` name part x, `from {name} import x, y` parts
    x and y (a part importing only its own face, `from {name} import x` inside x, is itself)."""
    found: dict[str, set[str]] = {}
    dotted = re.escape(name)
    for path in package.rglob("*.py"):
        parts = path.relative_to(package).parts
        if parts in (("__init__.py",), ("__main__.py",)) and name == "dpe_server":
            continue  # __init__ and __main__ of the package itself
        part = parts[0].removesuffix(".py")
        text = path.read_text()
        imported = set(re.findall(rf"^\s*(?:from|import) {dotted}\.(\w+)", text, re.M))
        for names in re.findall(rf"^\s*from {dotted} import \(?([\w, \n]+)\)?", text, re.M):
            imported.update(n.strip() for n in names.split(",") if n.strip())
        found.setdefault(part, set()).update(imported)
    return found


def _crossings(layers: list[list[str]], imports: dict[str, set[str]]) -> set[tuple[str, str]]:
    """The imports of a part from a part of its own layer (sideways) or of a layer above."""
    level = {part: i for i, layer in enumerate(layers) for part in layer}
    assert set(imports) == set(level), "every part has its place in the layers"
    return {
        (part, used)
        for part, uses in imports.items()
        for used in uses
        if used != part and used in level and level[used] <= level[part]
    }


def test_layout_parts_import_only_the_parts_below_them() -> None:
    assert _crossings(LAYERS, _imports()) == set()


FORMAT_PACKAGES = sorted(
    {
        fmt.extractor.split(":")[0].split(".")[2]
        for fmt in FORMATS.values()
        if fmt.extractor.startswith("dpe_server.extractors.")
    }
)
"""The subpackages of the registered formats (a new format takes its place by registering)."""
EXTRACTOR_LAYERS = [
    ["__init__"],
    ["registry"],
    FORMAT_PACKAGES,
    ["odf", "ooxml"],
    ["ocr"],
    ["kit"],
    ["base", "gcpause", "magic", "passwords"],
]
"""Inside `extractors/`: the registry over the formats, over the packages some formats share
(what OOXML formats share, what OpenDocument ones share), over OCR, over the kit every format
builds with (`kit/`), over what a format is (`base`) and the plain modules. A part imports
only parts of the layers below its own: a format never imports another format, a shared
package never another shared package, and nothing imports the registry but the package's
face (a container format, `legacy`, is handed it: `registry.py`)."""


def test_layout_extractors_import_only_the_layers_below_them() -> None:
    imports = _imports(PACKAGE / "extractors", "dpe_server.extractors")
    assert _crossings(EXTRACTOR_LAYERS, imports) == set()


def test_layout_a_sideways_import_between_formats_is_found(tmp_path: Path) -> None:
    """The check sees an import of one format from another, in either spelling."""
    import shutil

    copy = tmp_path / "extractors"
    shutil.copytree(PACKAGE / "extractors", copy, ignore=shutil.ignore_patterns("__pycache__"))
    planted = copy / "odt" / "planted.py"
    planted.write_text("from dpe_server.extractors.docx.items import PartCtx\n")
    (copy / "sheets" / "planted.py").write_text("from dpe_server.extractors import pdf, kit\n")
    (copy / "kit" / "planted.py").write_text("import dpe_server.extractors.ooxml.omml\n")
    imports = _imports(copy, "dpe_server.extractors")
    assert _crossings(EXTRACTOR_LAYERS, imports) == {
        ("odt", "docx"),
        ("sheets", "pdf"),
        ("kit", "ooxml"),
    }


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
