"""An OpenDocument package: its parts parsed safely, its namespaces, its metadata (meta.xml)
and lengths in pixels."""

from __future__ import annotations

import re

from lxml import etree

from dpe_server.extractors.kit.package import Package
from dpe_server.model.errors import CorruptError
from dpe_server.model.metadata import authorship, from_core
from dpe_server.model.tree import Properties

_NS = {
    "office": "urn:oasis:names:tc:opendocument:xmlns:office:1.0",
    "style": "urn:oasis:names:tc:opendocument:xmlns:style:1.0",
    "text": "urn:oasis:names:tc:opendocument:xmlns:text:1.0",
    "table": "urn:oasis:names:tc:opendocument:xmlns:table:1.0",
    "draw": "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0",
    "fo": "urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0",
    "xlink": "http://www.w3.org/1999/xlink",
    "dc": "http://purl.org/dc/elements/1.1/",
    "meta": "urn:oasis:names:tc:opendocument:xmlns:meta:1.0",
    "presentation": "urn:oasis:names:tc:opendocument:xmlns:presentation:1.0",
    "svg": "urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0",
    "math": "http://www.w3.org/1998/Math/MathML",
    "chart": "urn:oasis:names:tc:opendocument:xmlns:chart:1.0",
}
OFFICE, STYLE, TEXT, TABLE, DRAW, FO, XLINK, DC, META, PRESENTATION, SVG, MATH, CHART = (
    f"{{{_NS[k]}}}" for k in _NS
)
OFFICEOOO = "{http://openoffice.org/2009/office}"
"""LibreOffice's own namespace: it writes a slide's comments as `officeooo:annotation`."""
COMMENTS = frozenset((OFFICE + "annotation", OFFICEOOO + "annotation"))
"""A comment, as ODF writes it in a text and LibreOffice on a slide."""
LOEXT = "{urn:org:documentfoundation:names:experimental:office:xmlns:loext:1.0}"
SHAPES = frozenset(
    DRAW + t
    for t in (
        "custom-shape",
        "rect",
        "ellipse",
        "circle",
        "polygon",
        "polyline",
        "path",
        "line",
        "connector",
        "caption",
        "regular-polygon",
    )
)
"""Drawing shapes that can hold paragraphs of their own."""


def content_root(pkg: Package, body_tag: str) -> etree._Element:
    """The `office:body/<body_tag>` of content.xml (`office:text`, `office:presentation`)."""
    if not pkg.has("content.xml"):
        raise CorruptError(f"The .{pkg.expected} package has no content.xml part.")
    root = pkg.xml("content.xml")
    body = root.find(f"{OFFICE}body/{OFFICE}{body_tag}")
    if body is None:
        raise CorruptError(f"The content.xml part of the .{pkg.expected} has no office:{body_tag}.")
    return body


def parts(pkg: Package) -> tuple[etree._Element | None, etree._Element | None]:
    """content.xml and styles.xml, parsed (None when absent)."""
    return pkg.xml_or_none("content.xml"), pkg.xml_or_none("styles.xml")


_META = {
    "title": DC + "title",
    "subject": DC + "subject",
    "description": DC + "description",
    "creator": META + "initial-creator",
    "lastModifiedBy": DC + "creator",
    "created": META + "creation-date",
    "modified": DC + "date",
}


def meta(pkg: Package) -> dict[str, str]:
    """What meta.xml says: title, subject, description, creator, lastModifiedBy, created,
    modified (OOXML core properties' names) and keywords (joined by commas)."""
    root = pkg.xml_or_none("meta.xml")
    found = root.find(f"{OFFICE}meta") if root is not None else None
    if found is None:
        return {}
    out: dict[str, str] = {}
    for key, tag in _META.items():
        text = (found.findtext(tag) or "").strip()
        if text:
            out[key] = text
    keywords = [(k.text or "").strip() for k in found.iter(META + "keyword")]
    if any(keywords):
        out["keywords"] = ", ".join(k for k in keywords if k)
    return out


def properties(pkg: Package, page_titles: list[str]) -> Properties:
    info = meta(pkg)
    return from_core(info, len(page_titles), tuple(page_titles), authorship(info))


_LENGTH = re.compile(r"^\s*(-?[0-9]*\.?[0-9]+)\s*(cm|mm|in|pt|pc|px)?\s*$")
_PX_PER = {"cm": 96 / 2.54, "mm": 96 / 25.4, "in": 96.0, "pt": 4 / 3, "pc": 16.0, "px": 1.0}


def length_px(value: str | None) -> int | None:
    """An ODF length (`2.5cm`, `1in`, `72pt`) in pixels at 96 per inch; None when unknown."""
    m = _LENGTH.match(value or "")
    if m is None:
        return None
    px = round(float(m[1]) * _PX_PER[m[2] or "px"])
    return px if 0 < px < 1_000_000 else None


def part_name(href: str | None) -> str | None:
    """A package-relative `xlink:href` (`Pictures/a.png`, `./Object 1`) as a part name; None
    for an external or empty reference."""
    if not href or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", href) or href.startswith(("/", "..")):
        return None
    name = href[2:] if href.startswith("./") else href
    return name or None


def plain_text(el: etree._Element) -> str:
    """The text of an element, one line per paragraph or heading inside it."""
    lines = []
    for p in el.iter(TEXT + "p", TEXT + "h"):
        lines.append(_flat(p))
    return "\n".join(lines).strip()


def _flat(p: etree._Element) -> str:
    out: list[str] = [p.text or ""]
    for child in p:
        tag = child.tag
        if tag == TEXT + "s":
            out.append(" " * spaces(child))
        elif tag == TEXT + "tab":
            out.append("\t")
        elif tag == TEXT + "line-break":
            out.append("\n")
        elif tag not in (TEXT + "note", OFFICE + "annotation") and isinstance(tag, str):
            out.append(_flat(child))
        out.append(child.tail or "")
    return "".join(out)


def all_text(el: etree._Element) -> str:
    """Every piece of text under `el`, white space collapsed to single spaces."""
    return " ".join("".join(t for t in el.itertext() if isinstance(t, str)).split())


def spaces(el: etree._Element) -> int:
    """The spaces a `text:s` stands for (`text:c`, at most 1000)."""
    try:
        return max(1, min(int(el.get(TEXT + "c", "1")), 1000))
    except ValueError:
        return 1
