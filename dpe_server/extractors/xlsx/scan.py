"""One pass over a worksheet part's bytes: what python-calamine does not give.

A worksheet part is `<worksheet> … <sheetData> cells </sheetData> merges, hyperlinks, data
validations, header/footer, drawing links … </worksheet>`. The cells can be millions; the
rest is small. So:

- everything but the cells is parsed with lxml (the *tail*: the part with `sheetData` cut out);
- the cells are scanned in place (`SheetScan.span`, never copied out of the part) with
  C-speed regular expressions for the few facts we need: the real extent of the used cells
  (never `<dimension>`), formulas, cells whose number format calamine does not apply
  (percentages, fixed decimals), error values;
- the values themselves come from calamine (`cells`) when the extent is dense enough
  for its dense grid, else from `read_cells` here (lxml iterparse, bounded by a cell cap),
  which also serves sheets whose cells have no `r` references.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from typing import NamedTuple

from lxml import etree

from dpe_server.extractors.kit.a1 import cell_ref, col_index, parse_ref
from dpe_server.extractors.kit.package import PartBytes
from dpe_server.extractors.kit.xml import parse_xml
from dpe_server.extractors.xlsx.book import string_item
from dpe_server.extractors.xlsx.extent import COLUMN_UPPER, cell_extent, count_cells
from dpe_server.extractors.xlsx.format import GENERAL, Styles, clip, general, show_number
from dpe_server.model.errors import CorruptError

DENSE_MIN_AREA = 1_000_000
"""A sheet whose used-cell rectangle is under this many cells is read densely by calamine."""
DENSE_FACTOR = 4
"""...or whose rectangle is at most this many times its cell count."""
DENSE_MAX_AREA = 4_000_000
"""Never hand calamine a rectangle larger than this: it allocates the whole grid (and its
rows become Python lists)."""
STREAM_MAX_CELLS = 500_000
"""Cells the streaming reader keeps at most (it costs far more per cell than calamine)."""

EXCEL_MAX_ROWS = 1_048_576

Cell = tuple[int, int]


class FormulaCell(NamedTuple):
    row: int
    col: int
    text: str
    """The formula without `=`; empty for a shared formula's dependent cells."""
    kind: str
    """normal, shared, array or dataTable."""
    si: str | None = None
    """The shared-formula group index."""


@dataclass(slots=True)
class SheetScan:
    """The facts of one worksheet part that are not cell values."""

    tail: etree._Element
    cells: PartBytes | None
    """The part's bytes, its cells (`sheetData`'s content) at `span`: searched in place, not
    copied out (21 MB of 50,000 rows); None once not needed (`style_of` then finds no
    cell)."""
    prefix: bytes
    span: tuple[int, int] = (0, 0)
    """Where the cells are in `cells`: from just after `<sheetData>` to `</sheetData>`."""
    n_cells: int = 0
    rows: tuple[int, int] | None = None
    """(row0, row1) of the rows that hold cells, from their own references."""
    col_upper: int = 16_383
    """A cheap upper bound of the last column (from the longest column name present)."""
    refs_ok: bool = True
    _cols: tuple[int, int] | None = None
    formulas: list[FormulaCell] = field(default_factory=list)
    styled: dict[Cell, int] = field(default_factory=dict)
    """Cells whose style has a number format calamine does not apply → style index."""
    errors: dict[Cell, str] = field(default_factory=dict)

    def columns(self) -> tuple[int, int] | None:
        """(col0, col1) of the cells, exactly (one pass over every cell reference; cached)."""
        if self._cols is None and self.refs_ok and self.n_cells and self.cells is not None:
            p = re.escape(self.prefix)
            refs = re.compile(rb"<" + p + rb'c\b[^>]*?\br="([A-Z]{1,3})\d')
            letters = set(refs.findall(self.cells, *self.span))
            cols = [col_index(x.decode()) for x in letters]
            self._cols = (min(cols), max(cols)) if cols else None
        return self._cols

    @property
    def bounds(self) -> tuple[int, int, int, int] | None:
        """(row0, col0, row1, col1) of the cells, from their own references (never
        `<dimension>`)."""
        cols = self.columns()
        if self.rows is None or cols is None:
            return None
        return (self.rows[0], cols[0], self.rows[1], cols[1])

    def _fits(self, width: int) -> bool:
        assert self.rows is not None
        area = (self.rows[1] - self.rows[0] + 1) * width
        return area <= DENSE_MAX_AREA and area <= max(DENSE_MIN_AREA, DENSE_FACTOR * self.n_cells)

    @property
    def dense(self) -> bool:
        """Whether calamine may read this sheet (it allocates the used rectangle densely).

        The cheap column bound decides most sheets; the exact extent is computed only when
        that bound is not enough."""
        if not self.refs_ok or self.rows is None or not self.n_cells:
            return False
        if self.rows[1] >= EXCEL_MAX_ROWS or not self._fits(1):
            return False  # rows past Excel's last, or too tall whatever the width
        if self._fits(self.col_upper + 1):
            return True
        cols = self.columns()
        return cols is not None and self._fits(cols[1] - cols[0] + 1)

    def style_of(self, row: int, col: int) -> int:
        """The style index of one cell (a targeted search; for a few cells only)."""
        if self.cells is None:
            return 0
        ref = cell_ref(row, col).encode()
        tag = re.compile(rb"<" + self.prefix + rb"c\b[^>]*?\br=\"" + ref + rb"\"[^>]*>")
        m = tag.search(self.cells, *self.span)
        if m is None:
            return 0
        s = re.search(rb'\bs="(\d+)"', m.group(0))
        return int(s.group(1)) if s else 0


_ROOT = re.compile(rb"<(\w+:)?(worksheet|chartsheet|dialogsheet|macrosheet)\b")
_ATTR = re.compile(rb'\b(\w+)="([^"]*)"')


def sheet_prefix(data: PartBytes) -> bytes:
    """The namespace prefix of a worksheet part's elements (`x:`), from its first 8 KB."""
    head = _ROOT.search(data, 0, 8192)
    return (head.group(1) or b"") if head else b""


def scan_sheet(
    data: PartBytes,
    special: set[int],
    part: str = "worksheet",
    max_cells: int = 2_000_000,
    c_tags: int | None = None,
) -> SheetScan:
    """Split a worksheet part into its tail (parsed) and its cells (scanned). `c_tags`: the
    `<c ` in `data` when the caller counted them (`part.sheet_part`)."""
    prefix = sheet_prefix(data)
    open_tag = re.compile(rb"<" + re.escape(prefix) + rb"sheetData\b[^>]*?(/?)>")
    m = open_tag.search(data)
    c_tag = b"<" + prefix + b"c "
    if m is None or m.group(1):
        start = end = 0
        tail_bytes = bytes(data)
    else:
        start = m.end()
        close = b"</" + prefix + b"sheetData>"
        end = _cells_end(data, close, start)
        if end < start:
            raise CorruptError(f"The {part} part is cut short inside its cells.", transient=True)
        tail_bytes = bytes(data[: m.start()]) + data[end + len(close) :]
        if c_tags is not None:  # less the head's and the tail's (small: read through)
            c_tags -= data.count(c_tag, 0, start) + data.count(c_tag, end)
    scan = SheetScan(parse_xml(tail_bytes, part), data, prefix, (start, end))
    if end > start:
        n = data.count(c_tag, start, end) if c_tags is None else c_tags
        _scan_cells(scan, data, special, n)
    return scan


def _cells_end(data: PartBytes, close: bytes, start: int) -> int:
    """Where `close` (`</sheetData>`) ends the cells: searched from the part's end, so only
    the tail (merges, links, ...: small) is read through, and not in a comment of the tail
    (one is when the last `<!--` before it is not closed before it; `-->` may be text too,
    so a `-->` after it without a `<!--` between is only the cue to look). -1 if none."""
    end = data.rfind(close, start)
    while end >= 0:
        arrow = data.find(b"-->", end)
        if arrow < 0 or data.find(b"<!--", end, arrow) >= 0:
            break
        opened = data.rfind(b"<!--", start, end)
        if opened < 0 or data.find(b"-->", opened + 4, end) >= 0:
            break
        end = data.rfind(close, start, opened)
    return end


def _scan_cells(scan: SheetScan, data: PartBytes, special: set[int], c_tags: int) -> None:
    """The scan's facts from the cells `data[scan.span]` (`c_tags`: the `<c ` among them)."""
    p = re.escape(scan.prefix)
    start, end = scan.span
    if c_tags > DENSE_MAX_AREA:
        # Too many for calamine whatever their extent: the streaming reader reads up to its
        # cap and says `truncated`.
        scan.n_cells = c_tags
        scan.refs_ok = False
        return
    extent = cell_extent(data, scan.prefix, c_tags, start, end)
    scan.refs_ok = extent is not None
    if extent is None:
        # Every cell element, whatever follows its name or its prefix: the streaming reader
        # reads them (a `<c>` with no attributes at all has no reference either).
        scan.n_cells = count_cells(data, start, end)
        return
    scan.n_cells = extent.cells
    scan.rows = (extent.row0, extent.row1)
    scan.col_upper = COLUMN_UPPER[extent.letters]
    if data.find(b"<" + scan.prefix + b"f", start, end) >= 0:
        scan.formulas = _formulas(data, scan.prefix, start, end)
    if special:
        alt = b"|".join(str(i).encode() for i in sorted(special))
        tags = re.compile(rb"<" + p + rb'c\b[^>]*?\bs="(?:' + alt + rb')"[^>]*>')
        for m in tags.finditer(data, start, end):
            attrs = dict(_ATTR.findall(m.group(0)))
            pos = parse_ref(attrs.get(b"r", b"").decode())
            if pos is not None and attrs.get(b"t", b"n") == b"n":
                scan.styled[pos] = int(attrs[b"s"])
    if data.find(b't="e"', start, end) >= 0:
        pattern = re.compile(
            rb"<" + p + rb'c\b([^>]*?\bt="e"[^>]*)>(.*?)</' + p + rb"c>", re.DOTALL
        )
        for m in pattern.finditer(data, start, end):
            attrs = dict(_ATTR.findall(m.group(1)))
            pos = parse_ref(attrs.get(b"r", b"").decode())
            v = re.search(rb"<" + p + rb"v>([^<]*)</", m.group(2))
            if pos is not None and v is not None:
                scan.errors[pos] = v.group(1).decode("utf-8", "replace")


def _unescape(text: bytes) -> str:
    s = text.decode("utf-8", "replace")
    if "&" in s:
        s = (
            s.replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", '"')
            .replace("&apos;", "'")
            .replace("&amp;", "&")
        )
    return s


def _formulas(cells: PartBytes, prefix: bytes, start: int, end: int) -> list[FormulaCell]:
    """Every formula of `cells[start:end]` with its cell: one regular expression for the
    usual layout (the formula is the cell's first child), the general search for the rest."""
    p = re.escape(prefix)
    quick = re.compile(
        rb"<"
        + p
        + rb'c r="([A-Z]{1,3})(\d+)"[^>]*>\s*<'
        + p
        + rb"f\b([^>]*?)(?:/>|>([^<]*)</"
        + p
        + rb"f>)"
    )
    out: list[FormulaCell] = []
    for letters, digits, attrs, body in quick.findall(cells, start, end):
        kind, si = "normal", None
        if attrs:
            f_attrs = dict(_ATTR.findall(attrs))
            kind = f_attrs.get(b"t", b"normal").decode()
            raw_si = f_attrs.get(b"si")
            si = raw_si.decode() if raw_si else None
        text = _unescape(body) if body else ""
        if text or kind == "shared":
            out.append(FormulaCell(int(digits) - 1, col_index(letters.decode()), text, kind, si))
    if len(out) == cells.count(b"<" + prefix + b"f", start, end):
        return out
    return _formulas_anywhere(cells, prefix, start, end)


def _formulas_anywhere(cells: PartBytes, prefix: bytes, start: int, end: int) -> list[FormulaCell]:
    p = re.escape(prefix)
    out: list[FormulaCell] = []
    c_open = b"<" + prefix + b"c"
    pattern = re.compile(rb"<" + p + rb"f\b([^>]*?)(?:/>|>(.*?)</" + p + rb"f>)", re.DOTALL)
    for m in pattern.finditer(cells, start, end):
        at = cells.rfind(c_open, start, m.start())
        if at < 0:
            continue
        tag_end = cells.find(b">", at, end)
        tag_end = end if tag_end < 0 else tag_end
        attrs = dict(_ATTR.findall(cells[at:tag_end]))
        pos = parse_ref(attrs.get(b"r", b"").decode())
        if pos is None:
            continue
        f_attrs = dict(_ATTR.findall(m.group(1)))
        kind = f_attrs.get(b"t", b"normal").decode()
        si = f_attrs.get(b"si")
        text = _unescape(m.group(2) or b"")
        if not text and kind != "shared":
            continue
        out.append(FormulaCell(pos[0], pos[1], text, kind, si.decode() if si else None))
    return out


# --- the slow, exact reader --------------------------------------------------------------------


@dataclass(slots=True)
class SparseCells:
    """Cells read one by one (sheets calamine must not read): display strings by position."""

    values: dict[Cell, str] = field(default_factory=dict)
    styles: dict[Cell, int] = field(default_factory=dict)
    formulas: list[FormulaCell] = field(default_factory=list)
    truncated: bool = False


def read_cells(
    data: PartBytes, strings: list[str], styles: Styles, date1904: bool, max_cells: int
) -> SparseCells:
    """Every non-empty cell of a worksheet part, streamed with lxml; at most `max_cells`.

    Only cell and row ends reach Python (lxml filters the rest); each row is dropped once
    read, so memory stays flat however many rows there are."""
    out = SparseCells()
    row = -1
    col = -1
    last_row_el: etree._Element | None = None
    parser = etree.iterparse(
        io.BytesIO(data),
        events=("end",),
        tag=("{*}c", "{*}row", "c", "row"),
        resolve_entities=False,
        no_network=True,
        huge_tree=False,
    )
    try:
        for _, el in parser:
            tag = el.tag
            if not (tag == "c" or tag.endswith("}c")):
                el.clear()
                while el.getprevious() is not None:  # drop the rows already read
                    del el.getparent()[0]
                continue
            parent = el.getparent()
            if parent is not last_row_el:
                last_row_el = parent
                r = parent.get("r") if parent is not None else None
                row = int(r) - 1 if r and r.isdigit() else row + 1
                col = -1
            ref = el.get("r")
            pos = _split_ref(ref) if ref else None
            if pos is not None:
                row, col = pos
            else:
                col += 1
            _read_cell(el, (row, col), out, strings=strings, styles=styles, date1904=date1904)
            el.clear()
            if len(out.values) >= max_cells:
                out.truncated = True
                break
    except etree.XMLSyntaxError as exc:
        raise CorruptError(f"A worksheet part is not well-formed XML ({exc.msg}).") from None
    return out


_DIGITS = "0123456789"


def _split_ref(ref: str) -> Cell | None:
    """(row, col) of `B3` with string operations only (no regular expression per cell)."""
    letters = ref.rstrip(_DIGITS)
    digits = ref[len(letters) :]
    if not letters or not digits or len(letters) > 3 or not letters.isalpha():
        return None
    return int(digits) - 1, col_index(letters.upper())


def _read_cell(
    el: etree._Element,
    pos: Cell,
    out: SparseCells,
    *,
    strings: list[str],
    styles: Styles,
    date1904: bool,
) -> None:
    t = el.get("t", "n")
    s = el.get("s")
    xf = int(s) if s and s.isdigit() else 0
    if xf:
        out.styles[pos] = xf
    v_text: str | None = None
    for child in el:
        name = str(child.tag).rpartition("}")[2]
        if name == "v":
            v_text = child.text or ""
        elif name == "f":
            kind = child.get("t", "normal")
            if child.text or kind == "shared":
                out.formulas.append(
                    FormulaCell(pos[0], pos[1], child.text or "", kind, child.get("si"))
                )
        elif name == "is":
            v_text = string_item(child)
    if v_text is None:
        return
    value = clip(_typed(t, v_text, strings, styles.format(xf) if xf else GENERAL, date1904))
    if value != "":
        out.values[pos] = value


def _typed(t: str, v: str, strings: list[str], fmt: object, date1904: bool) -> str:
    if t == "s":
        try:
            return strings[int(v)]
        except (ValueError, IndexError):
            return ""
    if t == "b":
        return "TRUE" if v.strip() in ("1", "true") else "FALSE"
    if t in ("str", "inlineStr", "e", "d"):
        return v
    try:
        number = float(v)
    except ValueError:
        return v
    if fmt is GENERAL:
        return general(number)
    return show_number(number, fmt, date1904)  # type: ignore[arg-type]
