"""A diagram element's content (SmartArt, connected shapes): its nodes and the sentence that
sums them up."""

from __future__ import annotations

from collections.abc import Sequence

from dpe_server.model.content import DiagramContent


def diagram_content(nodes: Sequence[str], kind: str = "smartart") -> DiagramContent:
    """Diagram element content: `{kind, nodes, data_summary}`."""
    label = "SmartArt" if kind == "smartart" else kind.replace("_", " ").capitalize()
    shown: list[str] = []
    length = 0
    for node in nodes:
        flat = " ".join(node.split())
        if len(shown) == 8 or (shown and length + len(flat) > 100):
            break
        shown.append(flat)
        length += len(flat) + 3
    rest = len(nodes) - len(shown)
    body = " → ".join(shown) + (f" → … (+{rest} more)" if rest else "")
    count = f"{len(nodes)} node" + ("" if len(nodes) == 1 else "s")
    summary = f"{label} with {count}: {body}" if nodes else f"{label} with no text"
    return {"kind": kind, "nodes": list(nodes), "data_summary": summary}
