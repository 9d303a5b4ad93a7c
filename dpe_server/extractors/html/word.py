"""What Word writes when it saves a document as a web page: a list item is a paragraph
styled `mso-list:l0 level1 lfo1`, its bullet or number in a span styled `mso-list:Ignore`
(inside a `<![if !supportLists]>` block the parser reads as content)."""

from __future__ import annotations

import copy
import re

from lxml import etree

from dpe_server.extractors.html.visible import text_of

_LIST = re.compile(r"mso-list\s*:\s*l\d+\s+level(\d+)", re.I)
_IGNORE = re.compile(r"mso-list\s*:\s*ignore", re.I)
_NUMBERED = re.compile(r"^(?:\d{1,9}|[a-zA-Z]|[ivxlcdmIVXLCDM]{1,8})[.)]$")


def is_list_paragraph(el: etree._Element) -> bool:
    return bool(_LIST.search(el.get("style") or ""))


def list_paragraph(el: etree._Element) -> tuple[int, str, etree._Element]:
    """The item's level (from 0), its number as Word shows it ("" for a bullet) and the
    paragraph without its bullet or number."""
    found = _LIST.search(el.get("style") or "")
    level = max(int(found[1]) - 1, 0) if found else 0
    rest = copy.deepcopy(el)
    label = ""
    for span in list(rest.iter("span")):
        if _IGNORE.search(span.get("style") or ""):
            label = text_of(span)
            tail = span.tail
            parent = span.getparent()
            span.tail = None
            if parent is not None:
                parent.remove(span)
                if tail:
                    rest.text = (rest.text or "") + tail
            break
    return level, label if _NUMBERED.match(label) else "", rest
