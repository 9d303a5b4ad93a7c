"""Word (.docx, .docm) → DPE tree: sections and top-level headings as pages (SPEC §5).

The body XML is walked directly (lxml, through `Package` so the zip and XML checks apply):
python-docx does not see inside content controls, text boxes or altChunks, and its object
layer is slower than a plain walk. Modules:

- `xml`: tag names and part loading (Strict OOXML mapped onto Transitional);
- `styles`: heading levels, code styles; `numbering` (and `kit.numformat`): list numbering;
- `pages`: the page plan (where pages begin, continuation pages, titles);
- `body`, `runs`, `tables`, `drawing`, `forms`: elements;
- `parts`: main part lookup, notes, headers/footers, altChunk HTML; `comments`: comments
  with Word's reply threads nested.

Decisions (where SPEC leaves room):
- pages start at the highest heading level the body uses and after every section break
  (continuous ones too); Title is a heading above Heading 1 that starts pages only when the
  body has no other heading; headings inside tables and text boxes never start pages;
- a page over 200 blocks (paragraphs, tables) or 60,000 characters is cut at block
  boundaries into "{title} (cont. N)" pages (`metadata.continuation`, `continued_from`);
- page title: the heading starting the page, else its first heading, else "Section {S}";
- heading `level`: Heading N → N, Title → 1 (its style in `metadata.style`); list item
  `level` is the 0-based `w:ilvl`; a list is a run of paragraphs of one `numId` (a deeper
  level with another numId nests), its `ordered` its first item's (from `w:numFmt`); ordered
  items carry Word's number `label`, counted per page;
- merged table cells keep their text in the top-left cell, covered cells are "", and
  `metadata.merged_cells` lists A1-style ranges relative to the table;
- every page repeats its section's headers and footers (first, then body, then footers),
  each variant (default/first/even) once, `metadata.shown` saying whether Word shows it;
- deleted text is left out of text and kept in `deletion` annotations; inserted text stays
  in the text and is also an `insertion` annotation;
- elements found inside a paragraph follow its text element (those before any text precede).

The probe reads core.xml, styles.xml and document.xml (streamed when large, each body-level
block dropped once read) and runs the same page plan as the extraction without building any
element, so its page count and titles are exact.
"""

from __future__ import annotations

import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from typing import BinaryIO

from lxml import etree

from dpe_server.extractors import docx
from dpe_server.extractors.base import Limits
from dpe_server.extractors.docx.body import Env, build_page
from dpe_server.extractors.docx.items import PartCtx
from dpe_server.extractors.docx.numbering import Numbering
from dpe_server.extractors.docx.pages import flatten, section_properties, stream_blocks
from dpe_server.extractors.docx.parts import (
    Related,
    check_root,
    even_and_odd,
    load_notes,
    main_part,
    related,
    section_header_footers,
)
from dpe_server.extractors.docx.runs import InlineReader
from dpe_server.extractors.docx.styles import Styles
from dpe_server.extractors.docx.xml import load, load_or_none
from dpe_server.extractors.kit.package import Package
from dpe_server.extractors.kit.pages import PagePlan, plan_pages
from dpe_server.extractors.magic import sniff
from dpe_server.extractors.ooxml.macros import package_extractor
from dpe_server.extractors.ooxml.strict import from_strict
from dpe_server.model.errors import CorruptError, ExtractionError, UnsupportedError
from dpe_server.model.metadata import authorship, from_core
from dpe_server.model.tree import Document, Page, Properties

STREAM_ABOVE = 4 * 1024 * 1024
"""The probe streams document.xml parts larger than this (bytes, as declared)."""


@dataclass
class _Opened:
    pkg: Package
    ctx: PartCtx
    rel: Related
    styles: Styles
    body: etree._Element
    plans: list[PagePlan]
    sect_prs: list[etree._Element | None]
    truncated: bool


def _properties(pkg: Package, plans: list[PagePlan]) -> Properties:
    core = pkg.core_properties()
    return from_core(core, len(plans), tuple(p.title for p in plans), authorship(core))


def _open(pkg: Package, limits: Limits) -> _Opened:
    part = main_part(pkg)
    ctx = PartCtx(pkg, part)
    body = check_root(load(pkg, part))
    rel = related(ctx)
    styles = Styles(load_or_none(pkg, rel.styles) if rel.styles else None)
    blocks = flatten(body, styles)
    plans = plan_pages(blocks)
    truncated = len(plans) > limits.max_pages
    return _Opened(
        pkg,
        ctx,
        rel,
        styles,
        body,
        plans[: limits.max_pages],
        section_properties(body, blocks),
        truncated,
    )


def _env(o: _Opened, limits: Limits) -> Env:
    pkg = o.pkg
    numbering = Numbering(load_or_none(pkg, o.rel.numbering) if o.rel.numbering else None)
    notes = load_notes(pkg, o.rel, o.styles)
    hf = section_header_footers(o.sect_prs, o.ctx, even_and_odd(pkg, o.rel.settings))
    reader = InlineReader(o.ctx, o.styles, notes)
    return Env(o.ctx, o.styles, numbering, reader, hf, limits, o.plans)


def _flat_xml(f: BinaryIO) -> None:
    """A Flat OPC or Word 2003 XML document saved with a .docx name: say so."""
    if sniff(f) != "other":
        return
    head = f.read(4096)
    f.seek(0)
    if b"<pkg:package" in head or b"<w:wordDocument" in head or b"mso-application" in head:
        raise UnsupportedError(
            "This file is a Word XML document (Flat OPC or Word 2003 XML) renamed to .docx; "
            "save it as .docx to read it."
        )


def _guarded(f: BinaryIO, limits: Limits) -> tuple[Package, _Opened]:
    _flat_xml(f)
    pkg = Package(f, "docx", limits)
    try:
        return pkg, _open(pkg, limits)
    except BaseException:
        pkg.close()
        raise


def _translate(exc: BaseException) -> ExtractionError:
    if isinstance(exc, RecursionError):
        return CorruptError("The Word document is nested too deeply to read.")
    name = type(exc).__name__
    return CorruptError(f"The Word document is malformed and cannot be read ({name}).")


_LIBRARY_ERRORS = (
    etree.LxmlError,
    KeyError,
    ValueError,
    IndexError,
    zipfile.BadZipFile,
    RecursionError,
)


def _probe_plans(pkg: Package, limits: Limits) -> list[PagePlan]:
    """The page plan without building elements. A large document.xml is streamed (blocks
    dropped as soon as they are read: about half the memory of a parse, somewhat more CPU);
    a small one is parsed whole (faster)."""
    part = main_part(pkg)
    if pkg.size(part) <= STREAM_ABOVE:
        return _open(pkg, limits).plans
    rel = related(PartCtx(pkg, part))
    styles = Styles(load_or_none(pkg, rel.styles) if rel.styles else None)
    blocks, root = stream_blocks(from_strict(pkg.read(part)), styles)
    check_root(root)
    return plan_pages(blocks)[: limits.max_pages]


def probe(f: BinaryIO, limits: Limits) -> Properties:
    try:
        _flat_xml(f)
        with Package(f, "docx", limits) as pkg:
            return _properties(pkg, _probe_plans(pkg, limits))
    except _LIBRARY_ERRORS as exc:
        raise _translate(exc) from None


def _pages(opened: _Opened, indices: Sequence[int] | None, limits: Limits) -> list[Page]:
    env = _env(opened, limits)
    wanted = range(len(opened.plans)) if indices is None else indices
    return [build_page(opened.plans[i], env) for i in wanted if 0 <= i < len(opened.plans)]


def extract(f: BinaryIO, limits: Limits) -> Document:
    try:
        pkg, opened = _guarded(f, limits)
        with pkg:
            pages = _pages(opened, None, limits)
            props = _properties(pkg, opened.plans)
    except _LIBRARY_ERRORS as exc:
        raise _translate(exc) from None
    cut = opened.truncated or any(p.metadata.get("truncated") for p in pages)
    meta = {"truncated": True} if cut else {}
    return Document(props, tuple(pages), meta)


def extract_pages(f: BinaryIO, indices: Sequence[int], limits: Limits) -> list[Page]:
    try:
        pkg, opened = _guarded(f, limits)
        with pkg:
            return _pages(opened, sorted(set(indices)), limits)
    except _LIBRARY_ERRORS as exc:
        raise _translate(exc) from None


EXTRACTOR = package_extractor(docx.FORMAT, probe, extract, extract_pages)
