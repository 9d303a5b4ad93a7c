"""The pptx extractor over ../shared/corpus/pptx (skipped when absent), from the session's
one extraction of the corpus (tests/corpus_trees.py): every file ends in a tree or a clear
error kind, and the SmartArt node texts and speaker notes the files hold actually come out."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import pytest
from lxml import etree

from dpe_server.model.tree import parse_element_id
from tests.corpus_trees import Outcome

CORPUS_PPTX = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "pptx"
FILES = sorted(p.name for p in CORPUS_PPTX.glob("*.pptx")) if CORPUS_PPTX.is_dir() else []

EXPECTED_ERRORS = {
    "poi__Divino_Revelado.pptx": "corrupt",
    "poi__clusterfuzz-testcase-minimized-POIXSLFFuzzer-6254434927378432.pptx": "corrupt",
    "tika__testPPT_protected_passtika.pptx": "encrypted",
}

A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"


def _run(outcomes: dict[Path, Outcome], path: Path) -> dict[str, Any]:
    """The file's tree as served JSON (`ok`), or its error (`error`: kind and message)."""
    outcome = outcomes[path]
    if outcome.doc is None:
        return {"error": {"kind": outcome.kind, "message": outcome.message}}
    return {"ok": outcome.doc.to_json()}


def _flat(text: str) -> str:
    return " ".join(text.split())


def _raw_texts(path: Path) -> tuple[list[str], list[str]]:
    """(SmartArt data-model texts, notes body texts) read straight from the zip."""
    smartart: list[str] = []
    notes: list[str] = []
    with zipfile.ZipFile(path) as z:
        for name in z.namelist():
            if name.startswith("ppt/diagrams/data") and name.endswith(".xml"):
                root = etree.fromstring(z.read(name))
                smartart.extend(_flat(t.text or "") for t in root.iter(f"{A}t"))
            elif name.startswith("ppt/notesSlides/notesSlide") and name.endswith(".xml"):
                root = etree.fromstring(z.read(name))
                for sp in root.iter(f"{P}sp"):
                    ph = sp.find(f"{P}nvSpPr/{P}nvPr/{P}ph")
                    if ph is not None and ph.get("type") == "body":
                        notes.extend(_flat(t.text or "") for t in sp.iter(f"{A}t"))
    return [t for t in smartart if t], [t for t in notes if t]


@pytest.mark.corpus
@pytest.mark.parametrize("name", FILES or ["absent"])
def test_pptx_corpus_file_gives_tree_or_clear_error(
    corpus: Path, corpus_outcomes: dict[Path, Outcome], name: str
) -> None:
    result = _run(corpus_outcomes, corpus / "pptx" / name)
    if name in EXPECTED_ERRORS:
        assert result.get("error", {}).get("kind") == EXPECTED_ERRORS[name]
        assert result["error"]["message"].endswith(".")
        return
    assert "ok" in result, result.get("error")
    doc = result["ok"]
    assert len(doc["pages"]) == doc["properties"]["page_count"]
    for page in doc["pages"]:
        assert page["title"]
        for element in page["elements"]:
            parts = parse_element_id(element["element_id"])
            assert parts is not None
            assert parts.page_index == page["page_index"]
            assert len(element["summary"]) <= 120


@pytest.mark.corpus
@pytest.mark.parametrize("name", [n for n in FILES if n not in EXPECTED_ERRORS] or ["absent"])
def test_pptx_corpus_smartart_and_notes_text_come_out(
    corpus: Path, corpus_outcomes: dict[Path, Outcome], name: str
) -> None:
    path = corpus / "pptx" / name
    smartart, notes = _raw_texts(path)
    if not smartart and not notes:
        pytest.skip("no SmartArt text or speaker notes in this file")
    doc = _run(corpus_outcomes, path)["ok"]
    elements = [e for p in doc["pages"] for e in p["elements"]]
    nodes = " | ".join(
        _flat(n) for e in elements if e["category"] == "diagram" for n in e["content"]["nodes"]
    )
    spoken = " | ".join(
        _flat(e["content"]["text"])
        for e in elements
        if e["category"] == "annotation" and e["content"]["kind"] == "speaker_notes"
    )
    assert [t for t in smartart if t not in nodes] == []
    assert [t for t in notes if t not in spoken] == []
