"""Excel tables (`xl/tables/tableN.xml`) and pivot tables (`pivotTableDefinition` parts with
their `pivotCacheDefinition`): where they sit, their names and fields, the cells they show.
"""

from __future__ import annotations

from dataclasses import dataclass

from lxml import etree

from dpe_server.extractors.kit.a1 import parse_range, range_ref
from dpe_server.extractors.kit.package import Package, Relationship
from dpe_server.extractors.xlsx.book import kid, kids, walk
from dpe_server.extractors.xlsx.cells import Grid, Item, Rect, SheetCells
from dpe_server.model import summaries
from dpe_server.model.content import DataField, PivotTableContent
from dpe_server.model.tree import JSON, Category


@dataclass(frozen=True, slots=True)
class TableDef:
    name: str
    rect: Rect
    headers: list[str]
    header_rows: int
    totals_rows: int


def table_defs(pkg: Package, rels: dict[str, Relationship]) -> list[TableDef]:
    out: list[TableDef] = []
    for rel in rels.values():
        if rel.type_name != "table" or not pkg.has(rel.target):
            continue
        root = pkg.xml(rel.target)
        rect = parse_range(root.get("ref", ""))
        if rect is None:
            continue
        name = root.get("displayName") or root.get("name") or ""
        headers = [c.get("name", "") for c in kids(kid(root, "tableColumns"), "tableColumn")]
        header_rows = int(root.get("headerRowCount", "1") or 1)
        totals = int(root.get("totalsRowCount", "0") or 0)
        out.append(TableDef(name, rect, headers, header_rows, totals))
    out.sort(key=lambda t: (t.rect[0], t.rect[1]))
    return out


def table_grid(t: TableDef, cells: SheetCells, max_cells: int) -> tuple[Grid, list[str]]:
    """The table's cells as a grid, and its headers (its column names)."""
    rows = cells.area(t.rect, max_cells=max_cells)
    headers = t.headers if t.header_rows else []
    if headers and rows:
        rows[0] = list(headers) + rows[0][len(headers) :]
        headers = rows[0]
    return Grid(t.rect[0], t.rect[1], rows), headers


@dataclass(frozen=True, slots=True)
class PivotDef:
    name: str
    rect: Rect | None
    content: PivotTableContent
    """Everything but the cells: `headers` and `rows` are read from the sheet at layout."""
    header_row: int
    """The row of its area holding the column headers: the one above its first data row
    (`firstDataRow - 1`: with column fields that is `firstHeaderRow`, the column items under
    the captions above; without, Excel writes `firstHeaderRow` = `firstDataRow` and the
    headers, "Row Labels" and the data field's name, are the area's first row)."""


def pivot_defs(pkg: Package, rels: dict[str, Relationship]) -> list[PivotDef]:
    out: list[PivotDef] = []
    for rel in rels.values():
        if rel.type_name != "pivotTable" or not pkg.has(rel.target):
            continue
        root = pkg.xml(rel.target)
        cache = None
        for crel in pkg.rels(rel.target).values():
            if crel.type_name == "pivotCacheDefinition" and pkg.has(crel.target):
                cache = pkg.xml(crel.target)
        out.append(_pivot(root, cache))
    return out


def _pivot(root: etree._Element, cache: etree._Element | None) -> PivotDef:
    name = root.get("name", "")
    loc = kid(root, "location")
    ref = loc.get("ref", "") if loc is not None else ""
    fields: list[str] = []
    source: dict[str, str] = {}
    if cache is not None:
        fields = [f.get("name", "") for f in walk(cache, "cacheField")]
        ws = next(walk(cache, "worksheetSource"), None)
        if ws is not None:
            source = {key: ws.get(key, "") for key in ("sheet", "ref", "name") if ws.get(key)}

    def names(container: str) -> list[str]:
        out = []
        for f in kids(kid(root, container), "field"):
            x = int(f.get("x", "-1") or -1)
            out.append(fields[x] if 0 <= x < len(fields) else ("Values" if x == -2 else ""))
        return out

    data_fields: list[DataField] = []
    for df in kids(kid(root, "dataFields"), "dataField"):
        fld = int(df.get("fld", "-1") or -1)
        data_fields.append(
            {
                "name": df.get("name", ""),
                "field": fields[fld] if 0 <= fld < len(fields) else "",
                "function": df.get("subtotal", "sum"),
            }
        )
    page_fields = []
    for pf in kids(kid(root, "pageFields"), "pageField"):
        fld = int(pf.get("fld", "-1") or -1)
        page_fields.append(fields[fld] if 0 <= fld < len(fields) else "")
    content: PivotTableContent = {
        "name": name,
        "headers": [],
        "rows": [],
        "total_rows": 0,
        "location": ref,
        "fields": fields,
        "row_fields": names("rowFields"),
        "column_fields": names("colFields"),
        "data_fields": data_fields,
        "page_fields": page_fields,
    }
    if source:
        content["source"] = (
            f"{source['sheet']}!{source.get('ref', '')}"
            if "sheet" in source
            else source.get("name", "")
        )
    return PivotDef(name, parse_range(ref) if ref else None, content, _header_row(loc))


def _header_row(loc: etree._Element | None) -> int:
    def number(name: str) -> int:
        value = loc.get(name, "") if loc is not None else ""
        return int(value) if value.isdigit() else 0

    first_data = number("firstDataRow")
    return first_data - 1 if first_data > 0 else number("firstHeaderRow")


def pivot_item(p: PivotDef, cells: SheetCells) -> Item:
    rows = cells.area(p.rect) if p.rect else []
    first = p.header_row
    if rows and 0 <= first < len(rows):
        rows = rows[first:]
    headers = rows[0] if rows else p.content.get("row_fields", [])
    body = rows[1:] if rows else []
    content = p.content.copy()
    content["headers"], content["rows"], content["total_rows"] = headers, body, len(body)
    width = len(headers)
    meta: dict[str, JSON] = {"source_range": range_ref(*p.rect) if p.rect else ""}
    return Item(
        Category.PIVOT_TABLE,
        summaries.pivot_table(p.name, len(body), width),
        content,
        meta,
        (p.rect[0] + max(first, 0), p.rect[1]) if p.rect else (0, 0),  # after captions above
    )
