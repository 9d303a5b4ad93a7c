"""Shapes of a slide linked by connectors (`draw:connector` with `draw:start-shape` and
`draw:end-shape`) as one `diagram` element, kind `connector`, as the pptx reader gives them:
`nodes` the linked shapes' text (else their `draw:name`, else their id) in the order the
connectors first name them, `edges` pairs of node indexes."""

from __future__ import annotations

from lxml import etree

from dpe_server.extractors.kit.diagrams import diagram_content
from dpe_server.extractors.odf.package import DRAW, plain_text
from dpe_server.model.content import DiagramContent

_XML_ID = "{http://www.w3.org/XML/1998/namespace}id"


def connector_diagram(slide: etree._Element) -> DiagramContent | None:
    """The slide's connector diagram; None when no connector links two shapes."""
    edges_by_id = [
        (start, end)
        for cxn in slide.iter(DRAW + "connector")
        if (start := cxn.get(DRAW + "start-shape")) and (end := cxn.get(DRAW + "end-shape"))
    ]
    if not edges_by_id:
        return None
    texts: dict[str, str] = {}
    for shape in slide.iter():
        for sid in (shape.get(DRAW + "id"), shape.get(_XML_ID)):
            if sid:
                texts[sid] = " ".join(plain_text(shape).split()) or shape.get(DRAW + "name", "")
    order: list[str] = []
    for a, b in edges_by_id:
        for sid in (a, b):
            if sid not in order:
                order.append(sid)
    content = diagram_content([texts.get(s) or s for s in order], kind="connector")
    content["edges"] = [[order.index(a), order.index(b)] for a, b in edges_by_id]
    return content
