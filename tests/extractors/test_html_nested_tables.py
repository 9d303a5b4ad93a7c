"""A table nested in a web page's table cell is a table of its own (as docx and odt serve
one, `kit.tables`): its element follows its parent's with `nested_in`, the parent names it in
`nested_tables` and its cell says `[table {id}]`; its words are said once, its links kept."""

from __future__ import annotations

import io
import json
from pathlib import Path

from dpe_server.extractors import DEFAULT_LIMITS, for_path
from dpe_server.extractors.html.extract import EXTRACTOR
from dpe_server.model.tree import Category, Document


def _elements(doc: Document) -> list[dict[str, object]]:
    return [e.to_json() for p in doc.pages for e in p.elements]


def test_the_fixture_s_nested_table_is_its_own_element(fixture_dir: Path) -> None:
    path = fixture_dir / "web-browser-saved.html"
    extractor = for_path(path)
    assert extractor is not None
    with path.open("rb") as f:
        elements = _elements(extractor.extract(f, DEFAULT_LIMITS))
    tables = {str(e["element_id"]): e for e in elements if e["category"] == "table"}
    outer = next(e for e in tables.values() if "Month" in json.dumps(e["content"]))
    inner_id = outer["content"]["nested_tables"][0]  # type: ignore[index]
    inner = tables[inner_id]
    assert inner["metadata"] == {"nested_in": outer["element_id"], "nested_index": 1}
    assert inner["content"]["headers"] == ["Hour", "Count"]  # type: ignore[index]
    assert ["South bank", f"Bridge\n[table {inner_id}]"] == outer["content"]["rows"][1][1:]  # type: ignore[index]
    said = json.dumps([e["content"] for e in elements])
    assert said.count("WB-NestedCell dawn") == 1


def test_a_link_in_a_nested_table_is_kept() -> None:
    page = (
        b"<table><tr><th>A</th><th>B</th></tr><tr><td>x</td><td><table><tr><td>in"
        b" <a href='https://example.com/n'>nested link</a></td><td>v</td></tr></table>"
        b"</td></tr></table>"
    )
    elements = _elements(EXTRACTOR.extract(io.BytesIO(page), DEFAULT_LIMITS))
    links = [e for e in elements if e["category"] == Category.LINK.value]
    assert [link["content"] for link in links] == [
        {"text": "nested link", "url": "https://example.com/n"}
    ]
    assert [e["category"] for e in elements] == ["table", "table", "link"]
