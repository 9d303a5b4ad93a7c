"""An HTML body's paragraphs when no HTML reader is registered: lxml's HTML parser (no
network), scripts and styles dropped, a paragraph for each block's lines."""

from __future__ import annotations

import lxml.html
from lxml import etree

_BLOCKS = frozenset(
    (
        *("address", "article", "aside", "blockquote", "br", "dd", "div", "dl", "dt"),
        *("figcaption", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header"),
        *("hr", "li", "main", "nav", "ol", "p", "pre", "section", "table", "td", "th"),
        *("tr", "ul"),
    )
)


def paragraphs(html: str) -> list[str]:
    """The text of `html`, one string per non-empty line of its blocks."""
    parser = lxml.html.HTMLParser(no_network=True, remove_comments=True, remove_pis=True)
    try:
        root = lxml.html.document_fromstring(html.encode("utf-8"), parser=parser)
    except (etree.ParserError, ValueError):
        return []
    for el in list(root.iter("script", "style", "head", "title")):
        tail = el.tail
        el.clear()
        el.tail = tail
    for el in root.iter():
        if isinstance(el.tag, str) and el.tag.lower() in _BLOCKS:
            el.tail = "\n" + (el.tail or "")
            if el.tag.lower() != "br":
                el.text = "\n" + (el.text or "")
    lines = (
        " ".join(line.split()) for line in "".join(str(t) for t in root.itertext()).splitlines()
    )
    return [line for line in lines if line]
