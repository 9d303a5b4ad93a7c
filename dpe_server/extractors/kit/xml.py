"""XML read safely (`parse_xml`: no DOCTYPE, no entities, no network) and namespace-agnostic
helpers (`local`)."""

from __future__ import annotations

from lxml import etree

from dpe_server.model.errors import CorruptError


def local(el: etree._Element) -> str:
    """The local name of an element (comments and processing instructions give "")."""
    tag = el.tag
    if not isinstance(tag, str):
        return ""
    return tag.rsplit("}", 1)[-1]


def _parser() -> etree.XMLParser:
    return etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=False,
        remove_blank_text=False,
    )


def parse_xml(data: bytes, part: str = "part") -> etree._Element:
    """Parse XML safely: a DOCTYPE is refused, entities are never resolved."""
    head = data[:4096]
    if b"<!DOCTYPE" in head or b"<!ENTITY" in head:
        raise CorruptError(f"The {part} part declares a DOCTYPE, which OOXML never needs.")
    try:
        return etree.fromstring(data, _parser())
    except etree.XMLSyntaxError as exc:
        raise CorruptError(f"The {part} part is not well-formed XML ({exc.msg}).") from None
