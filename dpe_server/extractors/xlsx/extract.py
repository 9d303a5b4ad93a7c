"""The xlsx / xlsm extractor: every worksheet and chartsheet a page, in workbook order.

How a workbook is read (all through `kit.package.Package`, so the zip and XML safety checks apply):

- the probe reads workbook.xml (sheet names, hidden states) and docProps/core.xml only;
- each worksheet part is split by `scan` into its cells (scanned with regular
  expressions for their real extent, formulas, special number formats, errors) and its
  tail (merges, links, validations, header/footer, drawing links; parsed with lxml);
- cell values come from python-calamine when the real used rectangle is dense enough
  (it allocates that rectangle), else from a streaming reader (`scan.read_cells`);
  calamine opens a copy of the package whose parts stay compressed (`_cell_package`; each
  worksheet after an empty merge list, `_NO_MERGES`, so that calamine parses its cells
  once), and its rows are shown a few thousand at a time (`dense`); when no style of the workbook
  could make a title, the sheet's bytes are let go before calamine reads it;
- blocks of used cells and Excel tables become tables (`cells`, `tables`), formulas
  are grouped by pattern (`formulas`), drawings give charts, images and diagrams
  (`drawing`), and the small parts give notes, links, validations, pivot tables, form
  controls, print headers and footers (`parts`, `tables`, `drawing`).
"""

from __future__ import annotations

import io
import zipfile
import zlib
from collections.abc import Sequence
from itertools import islice
from typing import Any, BinaryIO

from lxml import etree
from python_calamine import CalamineError, CalamineWorkbook

from dpe_server.extractors import xlsx
from dpe_server.extractors.base import Limits
from dpe_server.extractors.gcpause import collector_paused
from dpe_server.extractors.kit import panics
from dpe_server.extractors.kit.a1 import parse_range
from dpe_server.extractors.kit.package import Package, PartBytes, RawMember, normalize_name
from dpe_server.extractors.kit.repack import prefixed, repack
from dpe_server.extractors.ooxml.macros import package_extractor
from dpe_server.extractors.xlsx.book import (
    SheetInfo,
    Workbook,
    people,
    read_workbook,
    shared_strings,
)
from dpe_server.extractors.xlsx.cells import CharBudget, Item, SheetCells, sparse_cells
from dpe_server.extractors.xlsx.dense import dense_cells
from dpe_server.extractors.xlsx.drawing import chartsheet_items
from dpe_server.extractors.xlsx.format import Styles, clip
from dpe_server.extractors.xlsx.page import build_sheet_items
from dpe_server.extractors.xlsx.part import sheet_part
from dpe_server.extractors.xlsx.scan import STREAM_MAX_CELLS, SheetScan, read_cells, scan_sheet
from dpe_server.model.errors import CorruptError, DpeError, ExtractionError, UnsupportedError
from dpe_server.model.metadata import from_core
from dpe_server.model.tree import JSON, Document, Page, PageBuilder, Properties

_LIBRARY_ERRORS = (
    etree.LxmlError,
    zipfile.BadZipFile,
    ValueError,
    KeyError,
    IndexError,
    UnicodeError,
    OverflowError,
    EOFError,
)


_CALAMINE_ERRORS = (CalamineError, ValueError, OverflowError, TypeError)
"""What calamine raises on a sheet it cannot read; the streaming reader then reads it."""


_NOT_FOR_CELLS = (
    "xl/media/",
    "xl/embeddings/",
    "xl/printersettings/",
    "xl/activex/",
    "xl/drawings/",
    "xl/charts/",
    "xl/diagrams/",
    "customxml/",
    "docprops/thumbnail",
)


def _calamine(source: io.BytesIO) -> Any:
    """calamine's workbook over `source`, or None when calamine cannot open it."""
    try:
        with panics.quiet():
            return CalamineWorkbook.from_filelike(source)
    except _CALAMINE_ERRORS:
        return None
    except BaseException as exc:
        if not panics.is_panic(exc):
            raise
        return None


_NO_MERGES = b"<mergeCells/>"
"""Put before a sheet's XML in the package calamine opens. python-calamine reads a sheet's
merged ranges whenever it hands a sheet over (`get_sheet_by_name`), by reading the sheet's
XML a second time up to its first `mergeCells`: for a sheet of 500,000 cells a fifth of the
extraction's instructions, its cells parsed twice. The page's merged ranges come from the
sheet's tail (`parts.merges`), never from calamine, so that second read is ended at once by
an empty `mergeCells` first; calamine's cell reader looks for `sheetData` and skips it."""


def _cell_package(
    pkg: Package, cut: tuple[str, bytes] | None = None, *, sheets: frozenset[str] = frozenset()
) -> io.BytesIO:
    """What calamine needs, as a clean zip: like `Package.sanitized()` (normalised names,
    every part inflated under the caps) but without pictures, embeddings and drawings, and
    each part copied as it is compressed once it has inflated under the caps
    (`Package.raw`): calamine inflates it again itself, so neither this copy nor calamine's
    holds a sheet inflated. A worksheet part of `sheets` (lower-case part names) starts with
    `_NO_MERGES`. With `cut` (a sheet's part name and its bytes cut at the cell
    cap: `xlsx_part`), that part is those bytes, stored, and the other sheets are left out."""
    own = normalize_name(cut[0]).lower() if cut else ""
    members: list[RawMember] = []
    for name in pkg.names():
        key = name.lower()
        if cut and key == own:
            body = cut[1]
        elif key.startswith(_NOT_FOR_CELLS) or (own and key.startswith("xl/worksheets/")):
            continue
        elif (raw := pkg.raw(name)) is not None:
            members.append(prefixed(raw, _NO_MERGES) if key in sheets else raw)
            continue
        else:  # a method calamine may not read: inflated here
            body = pkg.read(name)
        member = RawMember(name, zipfile.ZIP_STORED, zlib.crc32(body), body, len(body))
        members.append(prefixed(member, _NO_MERGES) if key in sheets else member)
    return repack(members)


def _properties(wb: Workbook, core: dict[str, str], limits: Limits) -> Properties:
    sheets = wb.sheets[: limits.max_pages]
    hidden: JSON = [s.name for s in sheets if s.hidden]
    return from_core(core, len(sheets), tuple(s.name for s in sheets), {"hidden_sheets": hidden})


def _workbook(pkg: Package, with_rels: bool) -> Workbook:
    wb = read_workbook(pkg, with_rels)
    if wb is None:
        raise UnsupportedError(
            "This .xlsx package has no workbook part; it may be another kind of OOXML file "
            "renamed to .xlsx."
        )
    if not wb.sheets:
        raise CorruptError("The workbook lists no sheets, so there is nothing to read.")
    return wb


def probe(f: BinaryIO, limits: Limits) -> Properties:
    """Sheet names and hidden states from workbook.xml, properties from core.xml."""
    try:
        with Package(f, "xlsx", limits) as pkg:
            return _properties(_workbook(pkg, with_rels=False), pkg.core_properties(), limits)
    except DpeError:
        raise
    except _LIBRARY_ERRORS as exc:
        raise CorruptError(f"The workbook could not be read ({type(exc).__name__}).") from None


class _Book:
    """The state of one extraction: the package, shared parts, cells read so far."""

    def __init__(self, pkg: Package, limits: Limits) -> None:
        self.pkg = pkg
        self.limits = limits
        self.wb = _workbook(pkg, with_rels=True)
        self.styles = Styles.read(pkg, self.wb)
        self.special = self.styles.special()
        self.budget = limits.max_cells
        self._strings: list[str] | None = None
        self._calamine: Any = None
        self._calamine_failed = False
        self._people: dict[str, str] | None = None
        self._cells: dict[str, tuple[SheetCells, SheetScan, dict[tuple[int, int], int] | None]] = {}
        self.truncated = False
        self.sheet_parts = frozenset(
            normalize_name(s.part).lower()
            for s in self.wb.sheets
            if s.part and s.kind == "worksheet"
        )
        """The worksheets' part names (lower case), as `Package.names` gives them."""

    @property
    def strings(self) -> list[str]:
        """The shared strings, each cut to a cell's limit (`format.clip`) once here rather than
        in every cell that shows it: a file may repeat one long string in all its cells."""
        if self._strings is None:
            self._strings = [clip(text) for text in shared_strings(self.pkg, self.wb)]
        return self._strings

    @property
    def people(self) -> dict[str, str]:
        if self._people is None:
            self._people = people(self.pkg, self.wb)
        return self._people

    def calamine(self) -> Any:
        """calamine over a clean copy of the package (see `_cell_package`), opened once."""
        if self._calamine is None and not self._calamine_failed:
            self._calamine = _calamine(_cell_package(self.pkg, sheets=self.sheet_parts))
            self._calamine_failed = self._calamine is None
        return self._calamine

    def sheet(
        self, info: SheetInfo
    ) -> tuple[SheetCells, SheetScan, dict[tuple[int, int], int] | None]:
        """A worksheet's cells and scan (cached: charts of other sheets read them too)."""
        cached = self._cells.get(info.name)
        if cached is not None:
            return cached
        assert info.part is not None
        data: PartBytes | None
        data, cut, c_tags = sheet_part(self.pkg, info.part, max(self.budget, 1))
        scan = scan_sheet(data, self.special, info.part, max(self.budget, 1), c_tags)
        cells: SheetCells | None = None
        styles: dict[tuple[int, int], int] | None = None
        if scan.n_cells and scan.dense:
            if cut:  # a cut part is bytes (`SheetPart`): handed over, not copied
                own = (info.part, data if isinstance(data, bytes) else bytes(data))
                cal = _calamine(_cell_package(self.pkg, own, sheets=self.sheet_parts))
            else:
                cal = self.calamine()
            if not self.styles.any_emphasised():
                # No style makes a title (`page.style_at`): the part's bytes are not needed
                # while calamine reads the sheet, nor after (read again if calamine fails).
                data = scan.cells = None
            cells = self._dense(cal, info, scan)
        if cells is None and scan.n_cells:
            data = (
                data
                if data is not None
                else sheet_part(self.pkg, info.part, max(self.budget, 1))[0]
            )
            cap = min(max(self.budget, 0), STREAM_MAX_CELLS)
            sparse = read_cells(data, self.strings, self.styles, self.wb.date1904, cap)
            cells = sparse_cells(sparse, max(self.budget, 1))
            scan.formulas = sparse.formulas
            styles = sparse.styles
        if cells is None:
            cells = SheetCells([])
        cells.truncated = cells.truncated or cut
        used = sum(len(g.rows) * g.width for g in cells.grids)
        self.budget -= used
        self.truncated = self.truncated or cells.truncated
        self._cells[info.name] = (cells, scan, styles)
        return cells, scan, styles

    def _dense(self, cal: Any, info: SheetInfo, scan: SheetScan) -> SheetCells | None:
        if cal is None:
            return None
        try:
            with panics.quiet():  # calamine yields its rows while dense_cells reads them
                sheet = cal.get_sheet_by_name(info.name)
                origin = sheet.start or (0, 0)
                # `iter_rows` yields the rows above the first used one too (empty), from column
                # `origin[1]` on; `to_python` would give the used rectangle, but all at once.
                rows = islice(sheet.iter_rows(), origin[0], None)
                return dense_cells(
                    rows,
                    (sheet.height, sheet.width),
                    origin,
                    scan,
                    styles=self.styles,
                    date1904=self.wb.date1904,
                    max_cells=max(self.budget, 1),
                )
        except _CALAMINE_ERRORS:
            return None  # the streaming reader takes over
        except BaseException as exc:
            if not panics.is_panic(exc):
                raise
            return None

    def resolve(self, formula: str, default: SheetInfo | None) -> list[str]:
        """Display strings of the cells a reference names (`'Sheet 1'!$B$2:$B$5`)."""
        text = formula.strip().lstrip("=").strip("()")
        if "!" not in text and text in self.wb.defined_names:
            text = self.wb.defined_names[text]
        out: list[str] = []
        for piece in text.split(","):
            sheet_name, _, ref = piece.rpartition("!")
            sheet_name = sheet_name.strip().strip("'").replace("''", "'")
            info = default if not sheet_name else self._by_name(sheet_name)
            rect = parse_range(ref)
            if info is None or rect is None or info.kind != "worksheet" or info.part is None:
                continue
            if not self.pkg.has(info.part):
                continue
            cells = self.sheet(info)[0]
            out.extend(v for row in cells.area(rect) for v in row)
        return out

    def _by_name(self, name: str) -> SheetInfo | None:
        for s in self.wb.sheets:
            if s.name == name:
                return s
        return None

    def page(self, index: int, info: SheetInfo) -> Page:
        meta: dict[str, Any] = {"sheet_type": info.kind}
        if info.hidden:
            meta["hidden"] = True
            meta["state"] = info.state
        items: list[Item] = []
        if info.part is None or not self.pkg.has(info.part):
            meta["missing"] = True
        elif info.kind == "chartsheet":
            items = chartsheet_items(self.pkg, info.part, lambda f: self.resolve(f, None))
        else:
            cells, scan, styles = self.sheet(info)
            budget = CharBudget(self.limits.max_chars_per_page)
            skipped: list[str] = []
            items = build_sheet_items(
                self, info, cells, scan, styles=styles, budget=budget, skipped=skipped
            )
            if skipped:
                meta["skipped_parts"] = skipped
            scan.cells = None  # the page is built: only the cells' values stay (for charts)
            if budget.truncated:
                meta["truncated"] = True
                self.truncated = True
            used = cells.used_range()
            if used:
                meta["used_range"] = used
            if cells.truncated:
                meta["truncated"] = True
        builder = PageBuilder(index, self.limits.max_elements_per_page)
        for it in items:
            builder.add(it.category, it.summary, it.content, it.metadata)
        return builder.build(info.name, meta)


def _refuse_duplicates(pkg: Package, f: BinaryIO) -> None:
    """Two zip members with one part name: readers disagree on which is real, so refuse."""
    f.seek(0)
    with zipfile.ZipFile(f) as z:
        names = [normalize_name(n).lower() for n in z.namelist()]
    seen: set[str] = set()
    for name in names:
        if name in seen and not name.endswith("/"):
            raise CorruptError(
                f"The package holds two parts named {name}, so which one is real is "
                "ambiguous; re-save the file from Excel to read it."
            )
        seen.add(name)


def _run(f: BinaryIO, limits: Limits, indices: Sequence[int] | None) -> Document:
    try:
        with Package(f, "xlsx", limits) as pkg:
            _refuse_duplicates(pkg, f)
            book = _Book(pkg, limits)
            sheets = book.wb.sheets[: limits.max_pages]
            wanted = range(len(sheets)) if indices is None else indices
            pages = [book.page(i, sheets[i]) for i in wanted if 0 <= i < len(sheets)]
            props = _properties(book.wb, pkg.core_properties(), limits)
            meta: dict[str, Any] = {}
            cut = any(p.metadata.get("truncated") for p in pages)
            if cut or book.truncated or len(book.wb.sheets) > limits.max_pages:
                meta["truncated"] = True
            return Document(props, tuple(pages), meta)
    except ExtractionError:
        raise
    except CalamineError as exc:
        raise CorruptError(f"The workbook's cells could not be read ({exc}).") from None
    except _LIBRARY_ERRORS as exc:
        raise CorruptError(f"The workbook could not be read ({type(exc).__name__}).") from None


def extract(f: BinaryIO, limits: Limits) -> Document:
    with collector_paused():  # a sheet's rows are lists of strings: no cycles to find
        return _run(f, limits, None)


def extract_pages(f: BinaryIO, indices: Sequence[int], limits: Limits) -> list[Page]:
    with collector_paused():
        return list(_run(f, limits, indices).pages)


EXTRACTOR = package_extractor(xlsx.FORMAT, probe, extract, extract_pages)

__all__ = ["EXTRACTOR", "extract", "extract_pages", "probe"]
