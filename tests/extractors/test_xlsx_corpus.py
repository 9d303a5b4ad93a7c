"""Every xlsx of ../shared/corpus ends in a tree or a clear error kind, never a crash.

The trees come from the session's one extraction of the corpus (tests/corpus_trees.py, in
worker processes: a hang or a crash fails its file, not the run). Skipped without a corpus.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.corpus_trees import Outcome

pytestmark = pytest.mark.corpus

EXPECTED_ERRORS = {
    "excelize__encryptAES.xlsx": "encrypted",
    "poi__extenxls_pwd123.xlsx": "encrypted",
    "poi__protect.xlsx": "encrypted",
    "poi__protected_passtika.xlsx": "encrypted",
    "poi__crash-9bf3cd4bd6f50a8a9339d363c2c7af14b536865c.xlsx": "encrypted",
    "poi__duplicate-filename.xlsx": "corrupt",
    "poi__poc-xmlbomb.xlsx": "corrupt",
    "poi__clusterfuzz-testcase-minimized-POIXSSFFuzzer-5089447305609216.xlsx": "corrupt",
    "poi__clusterfuzz-testcase-minimized-XLSX2CSVFuzzer-5636439151607808.xlsx": "corrupt",
    "openpyxl__null_archive.xlsx": "unsupported",
    "openpyxl__null_file.xlsx": "corrupt",
    "poi__SampleSS.xls-renamed.xlsx": "unsupported",
    "poi__SampleSS.xml2003-renamed.xlsx": "corrupt",
    "poi__invalid.xlsx": "unsupported",
    "pptx__minimal.pptx-renamed.xlsx": "unsupported",
}
KNOWN_EMPTY = {
    # 50,000 merged regions over cells that hold no value: nothing to show is the truth.
    "poi__57893-many-merges.xlsx",
}
MUST_CONTAIN = {
    "tika__testEXCEL_embeddedPDF_windows.xlsx": "Acrobat Document",
    "poi__SampleSS.strict.xlsx": "Test spreadsheet",
    "poi__49609.xlsx": "FAM",
    "calamine__issue_530.xlsx": "出勤",
    "poi__DataTableCities.xlsx": "pivot_table",
    "poi__commentTest.xlsx": "annotation",
    "poi__ExcelWithHyperlinks.xlsx": "link",
    "poi__DataValidations-49244.xlsx": "form",
    "openpyxl__contains_chartsheets.xlsx": "chart",
    "poi__right-to-left.xlsx": "تعليق",
}


def _row(outcome: Outcome) -> dict[str, object]:
    doc = outcome.doc
    if doc is None:
        return {"kind": outcome.kind, "message": outcome.message}
    text = json.dumps([p.to_json() for p in doc.pages], ensure_ascii=False)
    return {
        "kind": "ok",
        "pages": len(doc.pages),
        "elements": sum(len(p.elements) for p in doc.pages),
        "text": text[:200000],
    }


@pytest.fixture(scope="module")
def outcomes(corpus: Path, corpus_outcomes: dict[Path, Outcome]) -> dict[str, dict[str, object]]:
    files = sorted((corpus / "xlsx").glob("*.xls[xm]")) + sorted((corpus / "bad").glob("*.xls[xm]"))
    table = {f.name: _row(corpus_outcomes[f]) for f in files}
    for name, r in table.items():
        detail = (
            f"{r.get('pages')} pages, {r.get('elements')} elements"
            if r["kind"] == "ok"
            else r.get("message", "")
        )
        print(f"{r['kind']:<11} {name:<75} {str(detail)[:110]}")
    return table


def test_corpus_every_file_ends_in_tree_or_error_kind(
    outcomes: dict[str, dict[str, object]],
) -> None:
    bad = {
        n: r
        for n, r in outcomes.items()
        if r["kind"] not in ("ok", "encrypted", "corrupt", "unsupported", "too_large")
    }
    assert bad == {}


def test_corpus_expected_errors(outcomes: dict[str, dict[str, object]]) -> None:
    got = {n: outcomes[n]["kind"] for n in EXPECTED_ERRORS if n in outcomes}
    assert got == {n: k for n, k in EXPECTED_ERRORS.items() if n in outcomes}


def test_corpus_readable_files_are_not_empty(outcomes: dict[str, dict[str, object]]) -> None:
    empty = [
        n
        for n, r in outcomes.items()
        if r["kind"] == "ok" and not r["elements"] and n not in KNOWN_EMPTY
    ]
    assert empty == []


@pytest.mark.parametrize(("name", "needle"), sorted(MUST_CONTAIN.items()), ids=sorted(MUST_CONTAIN))
def test_corpus_file_content(
    outcomes: dict[str, dict[str, object]], name: str, needle: str
) -> None:
    if name not in outcomes:
        pytest.skip(f"{name} is not in this corpus")
    assert outcomes[name]["kind"] == "ok"
    assert needle in str(outcomes[name]["text"])
