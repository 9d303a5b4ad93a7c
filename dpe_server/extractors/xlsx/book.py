"""The workbook-level parts of an xlsx: sheets, styles, shared strings, cell references.

Everything reads XML by local name, so Transitional (`schemas.openxmlformats.org`) and Strict
(`purl.oclc.org/ooxml`) packages are read alike. Nothing here touches cell values of big
sheets: see `scan` for those.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from lxml import etree

from dpe_server.extractors.kit.package import Package, resolve_target
from dpe_server.extractors.kit.xml import local
from dpe_server.model.errors import UnsupportedError

# --- namespace-agnostic XML helpers -------------------------------------------------------


def kids(el: etree._Element | None, name: str) -> list[etree._Element]:
    """The children of `el` with local name `name`."""
    if el is None:
        return []
    return list(el.iterchildren("{*}" + name))


def kid(el: etree._Element | None, name: str) -> etree._Element | None:
    """The first child of `el` with local name `name`."""
    if el is None:
        return None
    return next(el.iterchildren("{*}" + name), None)


def walk(el: etree._Element, name: str) -> Iterator[etree._Element]:
    """Every descendant (and `el` itself) with local name `name`, in document order."""
    return el.iter("{*}" + name)


def rel_id(el: etree._Element, name: str = "id") -> str | None:
    """An attribute in a relationships namespace (`r:id`, `r:embed`...), Transitional or Strict."""
    for raw_key, value in el.attrib.items():
        key = str(raw_key)
        if key.endswith("}" + name) and "relationships" in key:
            return str(value)
    return None


def string_item(el: etree._Element) -> str:
    """The text of a shared-string item / inline string / comment text (`si`, `is`, `text`).

    Phonetic runs (`rPh`, furigana) are left out: they repeat the text in another script.
    """
    parts: list[str] = []
    for d in el.iter("{*}t"):
        if next(d.iterancestors("{*}rPh"), None) is None:
            parts.append(d.text or "")
    return "".join(parts)


# --- the workbook part ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SheetInfo:
    """One `<sheet>` of workbook.xml, in workbook order."""

    name: str
    state: str
    """visible, hidden or veryHidden."""
    rid: str | None
    part: str | None = None
    """The sheet's part name (resolved through the workbook rels); None when unknown."""
    kind: str = "worksheet"
    """worksheet, chartsheet, dialogsheet or macrosheet (from the relationship type)."""

    @property
    def hidden(self) -> bool:
        return self.state in ("hidden", "veryHidden")


@dataclass(slots=True)
class Workbook:
    """workbook.xml and its relationships."""

    part: str
    sheets: list[SheetInfo]
    date1904: bool = False
    defined_names: dict[str, str] = field(default_factory=dict)
    rels: dict[str, tuple[str, str]] = field(default_factory=dict)
    """rId → (relationship type name, target part)."""


def workbook_part(pkg: Package) -> str | None:
    """The workbook part name: `xl/workbook.xml`, or what the package rels say."""
    if pkg.has("xl/workbook.xml"):
        return "xl/workbook.xml"
    for rel in pkg.rels("").values():
        if rel.type_name == "officeDocument" and not rel.external:
            return rel.target
    return None


_OTHER_MAIN_PARTS = {
    "presentation": "a PowerPoint presentation",
    "document": "a Word document",
}


def read_workbook(pkg: Package, with_rels: bool = True) -> Workbook | None:
    """Sheets in order (names, states), date system, defined names; None without a workbook."""
    part = workbook_part(pkg)
    if part is None or not pkg.has(part):
        return None
    root = pkg.xml(part)
    if local(root) != "workbook":
        what = _OTHER_MAIN_PARTS.get(local(root), "not a workbook")
        raise UnsupportedError(
            f"This package is {what} renamed to .xlsx; open it with its own application."
        )
    rels = {r.rid: (r.type_name, r.target) for r in pkg.rels(part).values()} if with_rels else {}
    pr = kid(root, "workbookPr")
    date1904 = pr is not None and pr.get("date1904", "0").lower() in ("1", "true")
    sheets: list[SheetInfo] = []
    for el in kids(kid(root, "sheets"), "sheet"):
        rid = rel_id(el)
        kind, target = rels.get(rid or "", ("worksheet", None))
        kind = {"chartsheet": "chartsheet", "dialogsheet": "dialogsheet"}.get(kind, kind)
        if kind not in ("chartsheet", "dialogsheet", "xlMacrosheet", "xlIntlMacrosheet"):
            kind = "worksheet"
        sheets.append(SheetInfo(el.get("name", ""), el.get("state", "visible"), rid, target, kind))
    names: dict[str, str] = {}
    for dn in kids(kid(root, "definedNames"), "definedName"):
        if dn.get("name") and dn.text:
            names[dn.get("name", "")] = dn.text
    return Workbook(part, sheets, date1904, names, rels)


def workbook_target(wb: Workbook, type_name: str) -> str | None:
    """The first workbook relationship target of a type (`styles`, `sharedStrings`...)."""
    for kind, target in wb.rels.values():
        if kind == type_name:
            return target
    return None


def shared_strings(pkg: Package, wb: Workbook) -> list[str]:
    part = workbook_target(wb, "sharedStrings") or resolve_target(wb.part, "sharedStrings.xml")
    if not pkg.has(part):
        return []
    return [string_item(si) for si in kids(pkg.xml(part), "si")]


def people(pkg: Package, wb: Workbook) -> dict[str, str]:
    """Threaded-comment authors: person id → display name (xl/persons/person.xml)."""
    part = workbook_target(wb, "person")
    if part is None or not pkg.has(part):
        return {}
    return {
        p.get("id", ""): p.get("displayName", "")
        for p in walk(pkg.xml(part), "person")
        if p.get("id")
    }
