"""PowerPoint (.pptx, .pptm): every slide a page, every shape an element.

Read with lxml straight from the parts of `kit.package.Package` rather than through python-pptx:
python-pptx parses every XML part of the package when it opens it, so reading slide 50 would
cost the whole deck; here a page read parses `presentation.xml`, that slide, its layout and
master (cached per read), its notes and comments, and nothing else. The probe reads
`presentation.xml`, `docProps/core.xml` and the slides' title placeholders.

Pages (SPEC §5): title = the slide's title placeholder, else `Slide {N+1}`; page metadata
`hidden: true` for hidden slides and `layout` (the layout's name). Elements come from the
shape tree in reading order (`shapes`), then ActiveX controls, speaker notes and
comments (`extras`).
"""

from __future__ import annotations

import struct
import zipfile
from collections.abc import Callable, Sequence
from typing import BinaryIO, TypeVar

from lxml import etree

from dpe_server.extractors import pptx
from dpe_server.extractors.base import Limits
from dpe_server.extractors.kit.package import Package, normalize_name
from dpe_server.extractors.kit.xml import parse_xml
from dpe_server.extractors.ooxml.macros import package_extractor
from dpe_server.extractors.ooxml.strict import from_strict
from dpe_server.extractors.pptx.context import (
    TITLE_TYPES,
    Layout,
    Master,
    Sink,
    SlideContext,
    placeholder,
)
from dpe_server.extractors.pptx.extras import (
    controls,
    legacy_authors,
    legacy_comments,
    modern_authors,
    modern_comments,
    notes,
)
from dpe_server.extractors.pptx.shapes import walk
from dpe_server.extractors.pptx.text import P, R, plain_text
from dpe_server.model.errors import CorruptError, ExtractionError, UnsupportedError
from dpe_server.model.metadata import from_core
from dpe_server.model.tree import JSON, Document, Page, Properties

RT_OFFICE_DOC = "officeDocument"
RT_MODERN_AUTHORS = "http://schemas.microsoft.com/office/2018/10/relationships/authors"


class DeckPackage(Package):
    """`Package` whose XML parts are read with Strict namespaces mapped to Transitional."""

    def xml(self, name: str) -> etree._Element:
        return parse_xml(from_strict(self.read(name)), normalize_name(name))


T = TypeVar("T")


def slide_title(root: etree._Element) -> str | None:
    """The text of a slide's first title placeholder (`title` or `ctrTitle`), one line."""
    tree = root.find(f"{P}cSld/{P}spTree")
    if tree is None:
        return None
    for sp in tree.iter(f"{P}sp"):
        ph = placeholder(sp)
        if ph is not None and ph.get("type") in TITLE_TYPES:
            text = " ".join(plain_text(sp.find(f"{P}txBody"), " ").split())
            if text:
                return text
    return None


def is_hidden(root: etree._Element) -> bool:
    return root.get("show") in ("0", "false")


class Deck:
    """An open presentation: its slide parts in order, with layouts and masters cached."""

    def __init__(self, pkg: Package, limits: Limits) -> None:
        self.pkg = pkg
        self.limits = limits
        main = next((r.target for r in pkg.rels("").values() if r.type_name == RT_OFFICE_DOC), None)
        if main is None or not pkg.has(main) or not main.startswith("ppt/"):
            raise UnsupportedError(
                "This file is not a PowerPoint presentation (it has no ppt/presentation.xml)."
            )
        self.part = main
        self.root = pkg.xml(main)
        self.rels = pkg.rels(main)
        self.slides: list[str] = []
        for sld in self.root.iterfind(f"{P}sldIdLst/{P}sldId"):
            rel = self.rels.get(sld.get(f"{R}id", ""))
            if rel is not None and not rel.external:
                self.slides.append(rel.target)
        self.numbers = {part: i for i, part in enumerate(self.slides)}
        self.default_style = self.root.find(f"{P}defaultTextStyle")
        self._layouts: dict[str, Layout] = {}
        self._masters: dict[str, Master] = {}
        self._authors: tuple[dict[str, str], dict[str, str]] | None = None

    def _xml(self, part: str | None) -> etree._Element | None:
        if part is None or not self.pkg.has(part):
            return None
        try:
            return self.pkg.xml(part)
        except CorruptError:
            return None

    def _related(self, part: str, type_name: str) -> str | None:
        rel = next((r for r in self.pkg.rels(part).values() if r.type_name == type_name), None)
        return None if rel is None or rel.external else rel.target

    def layout(self, part: str | None) -> Layout:
        key = part or ""
        if key not in self._layouts:
            master_part = self._related(key, "slideMaster") if part else None
            mkey = master_part or ""
            if mkey not in self._masters:
                self._masters[mkey] = Master.parse(self._xml(master_part))
            master = self._masters[mkey]
            self._layouts[key] = Layout.parse(self._xml(part), master)
        return self._layouts[key]

    def authors(self) -> tuple[dict[str, str], dict[str, str]]:
        if self._authors is None:
            legacy = next((r for r in self.rels.values() if r.type_name == "commentAuthors"), None)
            modern = next((r for r in self.rels.values() if r.type == RT_MODERN_AUTHORS), None)
            self._authors = (
                legacy_authors(self._xml(legacy.target if legacy else None)),
                modern_authors(self._xml(modern.target if modern else None)),
            )
        return self._authors

    def properties(self, with_titles: bool = True) -> Properties:
        core = self.pkg.core_properties()
        titles: tuple[str, ...] | None = None
        extra: dict[str, JSON] = {}
        if with_titles:
            shown = self.slides[: self.limits.max_pages]
            roots = [self._xml(part) for part in shown]
            titles = tuple(
                (slide_title(r) if r is not None else None) or f"Slide {i + 1}"
                for i, r in enumerate(roots)
            )
            hidden = [i for i, r in enumerate(roots) if r is not None and is_hidden(r)]
            if hidden:
                extra["hidden_pages"] = hidden
        if core.get("creator"):
            extra["author"] = core["creator"]
        return from_core(core, len(self.slides), titles, extra)

    def page(self, index: int) -> Page:
        part = self.slides[index]
        sink = Sink(index, self.limits)
        root = self._xml(part)
        if root is None:
            return sink.builder.build(f"Slide {index + 1}", {"broken": True})
        rels = self.pkg.rels(part)
        layout_rel = next((r for r in rels.values() if r.type_name == "slideLayout"), None)
        layout = self.layout(None if layout_rel is None else layout_rel.target)
        ctx = SlideContext(self.pkg, part, rels, layout, self.default_style, self.numbers, sink)
        tree = root.find(f"{P}cSld/{P}spTree")
        if tree is not None:
            walk(tree, ctx)
        controls(root, ctx)
        notes(ctx)
        legacy, modern = self.authors()
        legacy_comments(ctx, legacy)
        modern_comments(ctx, modern)
        meta: dict[str, JSON] = {}
        if is_hidden(root):
            meta["hidden"] = True
        if layout.name:
            meta["layout"] = layout.name
        if sink.truncated:
            meta["truncated"] = True
        if ctx.broken_parts:
            meta["broken_parts"] = ctx.broken_parts
        return sink.builder.build(slide_title(root) or f"Slide {index + 1}", meta)


_LIBRARY_ERRORS = (
    LookupError,
    ValueError,
    TypeError,
    AttributeError,
    RecursionError,
    OSError,
    EOFError,
    struct.error,
    zipfile.BadZipFile,
    etree.LxmlError,
)


def _guarded(f: BinaryIO, limits: Limits, work: Callable[[Deck], T]) -> T:
    """Open `f` as a deck, run `work`, and translate whatever a library raises."""
    try:
        with DeckPackage(f, "pptx", limits) as pkg:
            return work(Deck(pkg, limits))
    except ExtractionError:
        raise
    except RecursionError:
        raise CorruptError("The presentation nests shapes too deeply to read.") from None
    except _LIBRARY_ERRORS as exc:
        raise CorruptError(
            f"The presentation is damaged and could not be read ({type(exc).__name__})."
        ) from None


def probe(f: BinaryIO, limits: Limits) -> Properties:
    return _guarded(f, limits, lambda deck: deck.properties())


def extract(f: BinaryIO, limits: Limits) -> Document:
    def work(deck: Deck) -> Document:
        count = min(len(deck.slides), limits.max_pages)
        pages = tuple(deck.page(i) for i in range(count))
        titles = tuple(p.title for p in pages)
        props = deck.properties(with_titles=False)
        hidden = [p.page_index for p in pages if p.metadata.get("hidden")]
        extra = dict(props.extra)
        if hidden:
            extra["hidden_pages"] = hidden
        props = Properties(
            props.page_count, props.title, props.keywords, props.summary, titles, extra
        )
        meta: dict[str, JSON] = {}
        if count < len(deck.slides) or any(p.metadata.get("truncated") for p in pages):
            meta["truncated"] = True
        return Document(props, pages, meta)

    return _guarded(f, limits, work)


def extract_pages(f: BinaryIO, indices: Sequence[int], limits: Limits) -> list[Page]:
    """The slides at `indices` (those that exist, under `max_pages`), parsing only those."""

    def work(deck: Deck) -> list[Page]:
        count = min(len(deck.slides), limits.max_pages)
        return [deck.page(i) for i in indices if 0 <= i < count]

    return _guarded(f, limits, work)


EXTRACTOR = package_extractor(pptx.FORMAT, probe, extract, extract_pages)
