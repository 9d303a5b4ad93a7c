"""Namespace-agnostic XML helpers."""

from __future__ import annotations

from lxml import etree


def local(el: etree._Element) -> str:
    """The local name of an element (comments and processing instructions give "")."""
    tag = el.tag
    if not isinstance(tag, str):
        return ""
    return tag.rsplit("}", 1)[-1]
