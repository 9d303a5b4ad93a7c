"""WordprocessingML names and the reading of docx parts as XML (Strict OOXML mapped).

The docx extractor walks the XML itself (python-docx does not see inside content controls),
so every tag it compares against is a constant here. A Strict OOXML package is read with its
namespaces mapped onto the Transitional ones (`ooxml.strict`).
"""

from __future__ import annotations

from lxml import etree

from dpe_server.extractors.kit.package import NS, Package
from dpe_server.extractors.kit.xml import parse_xml
from dpe_server.extractors.ooxml.strict import from_strict

W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
W = f"{{{W_NS}}}"
R = f"{{{NS['r']}}}"
A = f"{{{NS['a']}}}"
M = f"{{{NS['m']}}}"
MC = f"{{{NS['mc']}}}"
WP = "{http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing}"
PIC = "{http://schemas.openxmlformats.org/drawingml/2006/picture}"
WPS = "{http://schemas.microsoft.com/office/word/2010/wordprocessingShape}"
WPG = "{http://schemas.microsoft.com/office/word/2010/wordprocessingGroup}"
W14 = "{http://schemas.microsoft.com/office/word/2010/wordml}"
W15 = "{http://schemas.microsoft.com/office/word/2012/wordml}"
WP15 = "{http://schemas.microsoft.com/office/word/2012/wordprocessingDrawing}"
V = "{urn:schemas-microsoft-com:vml}"
VO = "{urn:schemas-microsoft-com:office:office}"
CT = f"{{{NS['ct']}}}"


def load(pkg: Package, name: str) -> etree._Element:
    """A part parsed safely, Strict namespaces mapped. KeyError when the part is absent."""
    return parse_xml(from_strict(pkg.read(name)), name)


def load_or_none(pkg: Package, name: str) -> etree._Element | None:
    return load(pkg, name) if pkg.has(name) else None


_VAL = W + "val"
_TAGS: dict[str, str] = {}


def val(el: etree._Element | None, child: str | None = None) -> str | None:
    """`w:val` of `el` (or of its child `w:{child}`); None when absent."""
    if el is not None and child is not None:
        tag = _TAGS.get(child)
        if tag is None:
            tag = _TAGS[child] = W + child
        el = el.find(tag)
    if el is None:
        return None
    return el.get(_VAL)


def on(el: etree._Element | None) -> bool:
    """An ST_OnOff toggle element: present and not switched off."""
    if el is None:
        return False
    return el.get(W + "val", "true").lower() not in ("0", "false", "off", "none")


def int_or(value: str | None, default: int) -> int:
    try:
        return int(value) if value is not None else default
    except ValueError:
        return default
