"""Every xlsx of ../shared/corpus ends in a tree or a clear error kind, never a crash.

Each file is extracted in its own child process with a deadline, as the server will do, so
a hang or a native crash fails one case instead of the whole run. Skipped without a corpus.
"""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytestmark = pytest.mark.corpus

DEADLINE_S = 60
CHILD = r"""
import json, sys
from dpe_server.model.errors import ExtractionError
from dpe_server.extractors import DEFAULT_LIMITS
from dpe_server.extractors.xlsx.extract import EXTRACTOR
try:
    with open(sys.argv[1], "rb") as f:
        doc = EXTRACTOR.extract(f, DEFAULT_LIMITS)
except ExtractionError as exc:
    print(json.dumps({"kind": exc.kind, "message": exc.message}))
else:
    text = json.dumps([p.to_json() for p in doc.pages], ensure_ascii=False)
    print(json.dumps({
        "kind": "ok",
        "pages": len(doc.pages),
        "elements": sum(len(p.elements) for p in doc.pages),
        "text": text[:200000],
    }))
"""

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


def _run(path: Path) -> dict[str, object]:
    root = Path(__file__).resolve().parents[1]
    try:
        proc = subprocess.run(
            [sys.executable, "-c", CHILD, str(path)],
            capture_output=True,
            text=True,
            timeout=DEADLINE_S,
            cwd=root,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {"kind": "hang"}
    if proc.returncode != 0 or not proc.stdout.strip():
        return {"kind": "crash", "stderr": proc.stderr[-2000:]}
    result: dict[str, object] = json.loads(proc.stdout)
    return result


@pytest.fixture(scope="module")
def outcomes(corpus: Path) -> dict[str, dict[str, object]]:
    files = sorted((corpus / "xlsx").glob("*.xls[xm]")) + sorted((corpus / "bad").glob("*.xls[xm]"))
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(_run, files))
    table = {f.name: r for f, r in zip(files, results, strict=True)}
    for name, r in table.items():
        detail = (
            f"{r.get('pages')} pages, {r.get('elements')} elements"
            if r["kind"] == "ok"
            else r.get("message", r.get("stderr", ""))
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
