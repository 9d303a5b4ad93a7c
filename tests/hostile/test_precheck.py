"""The checks every file passes before its extractor runs (`isolation.precheck`, called by
`jobs.run_job` for all formats), and an audit that extractors open files only through the
safe layers."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from dpe_server.extractors import DEFAULT_LIMITS, Limits
from dpe_server.isolation.jobs import Job, run_job
from dpe_server.isolation.precheck import precheck
from dpe_server.model.errors import TooLargeError
from tests.e2e.harness import write_deck, write_doc
from tests.hostile import cases
from tests.hostile.zipgen import plain, write_zip

Maker = Callable[[Path, Path], None]


def _zip_of_text(path: Path, _: Path) -> None:
    write_zip(path, [plain("readme.txt", "not an office file")])


def _cut_tail(path: Path, scratch: Path) -> None:
    write_deck(scratch / "deck.pptx", ["Cut"])
    path.write_bytes((scratch / "deck.pptx").read_bytes()[:-30])


REFUSED: list[tuple[str, Maker, str, str]] = [
    ("protected.docx", cases.encrypted, "encrypted", "password-protected"),
    ("pdf.docx", cases.pdf_named_docx, "unsupported", "PDF renamed to .docx"),
    ("pdf.pptx", cases.pdf_named_docx, "unsupported", "PDF renamed to .pptx"),
    ("docx.pdf", cases.docx_named_pdf, "unsupported", "Word document renamed to .pdf"),
    ("zip.pdf", _zip_of_text, "unsupported", "zip archive renamed to .pdf"),
    ("legacy.pdf", cases.legacy_doc, "unsupported", "legacy Office"),
    ("xlsx.docx", cases.xlsx_named_docx, "unsupported", "Excel workbook renamed to .docx"),
    ("docx.pptx", cases.docx_named_pdf, "unsupported", "Word document renamed to .pptx"),
    ("text.xlsx", cases.text_named_xlsx, "corrupt", "not a zip archive"),
    ("text.pdf", cases.text_named_xlsx, "corrupt", "does not start with a PDF header"),
    ("empty.docx", cases.empty, "corrupt", "empty"),
    ("empty.pdf", cases.empty, "corrupt", "empty"),
    ("cut.pptx", _cut_tail, "corrupt", "incomplete"),
    ("members.docx", cases.many_members, "too_large", "20000 parts"),
]


@pytest.mark.parametrize(("name", "make", "kind", "message"), REFUSED, ids=[r[0] for r in REFUSED])
def test_precheck_refuses(tmp_path: Path, name: str, make: Maker, kind: str, message: str) -> None:
    root, scratch = tmp_path / "root", tmp_path / "scratch"
    root.mkdir()
    scratch.mkdir()
    make(root / name, scratch)
    result = run_job(Job(str(root), name, "probe"))
    assert result["error"]["kind"] == kind  # type: ignore[index]
    assert message in result["error"]["message"]  # type: ignore[index]


@pytest.mark.parametrize("name", ["legacy.docx", "legacy.xlsx"])
def test_legacy_file_under_a_new_suffix_goes_to_its_own_reader(tmp_path: Path, name: str) -> None:
    """A (damaged) .doc under an OOXML suffix is read as a .doc: LibreOffice fails on it, or
    its absence is said; either way the message names .doc, not the suffix it wears."""
    cases.legacy_doc(tmp_path / name, tmp_path)
    error = run_job(Job(str(tmp_path), name, "probe"))["error"]
    expected = ("corrupt", "unsupported") if shutil.which("soffice") else ("unsupported",)
    assert error["kind"] in expected  # type: ignore[index]
    assert ".doc" in error["message"]  # type: ignore[index]
    assert Path(name).suffix not in error["message"].replace(".doc", "")  # type: ignore[index,union-attr]


def test_precheck_transient_for_half_written(tmp_path: Path) -> None:
    _cut_tail(tmp_path / "cut.pptx", tmp_path)
    assert run_job(Job(str(tmp_path), "cut.pptx", "probe"))["error"]["transient"] is True  # type: ignore[index]


@pytest.mark.parametrize("suffix", [".docx", ".pptx", ".pdf"])
def test_precheck_passes_real_files(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"ok{suffix}"
    if suffix == ".docx":
        write_doc(path, ["Fine"])
    elif suffix == ".pptx":
        write_deck(path, ["Fine"])
    else:
        cases.circular_xref(path, tmp_path)
    with path.open("rb") as f:
        precheck(f, suffix, DEFAULT_LIMITS)
        assert f.tell() == 0


def test_precheck_member_cap_follows_limits(tmp_path: Path) -> None:
    write_doc(tmp_path / "doc.docx", ["Members"])
    path = tmp_path / "doc.docx"
    with path.open("rb") as f, pytest.raises(TooLargeError, match="over the limit of 3"):
        precheck(f, ".docx", Limits(max_members=3))


# ---- audit: the extractors open input only through the safe layers ------------------------

EXTRACTORS = Path(__file__).resolve().parents[2] / "dpe_server" / "extractors"
RAW_OPENERS = re.compile(
    r"load_workbook\(|openpyxl|Presentation\(|docx\.Document\(|from docx import|"
    r"from pptx import|zipfile\.ZipFile\((?!out, \"w\")"
)
ALLOWED = {
    "kit/package.py": "the safe zip layer itself",
    "kit/zips.py": "namelist() of a package precheck opened, to name its kind",
    "xlsx/extract.py": "namelist() of the package Package opened, to refuse duplicate part names",
}


def _modules() -> dict[str, str]:
    return {
        path.relative_to(EXTRACTORS).as_posix(): path.read_text()
        for path in sorted(EXTRACTORS.rglob("*.py"))
    }


def test_precheck_audit_extractors_use_the_safe_layers() -> None:
    offenders = {
        name: RAW_OPENERS.findall(text)
        for name, text in _modules().items()
        if name not in ALLOWED and RAW_OPENERS.search(text)
    }
    assert offenders == {}


def test_precheck_audit_pdf_opened_in_one_place() -> None:
    users = [name for name, text in _modules().items() if "PdfReader(" in text]
    assert users == ["pdf/open.py"]


def test_precheck_audit_defusedxml_active_for_openpyxl() -> None:
    """openpyxl is not used by the extractors; should it ever be, defusedxml guards it."""
    import openpyxl.xml

    assert openpyxl.xml.DEFUSEDXML is True
