"""The whole folder on the corpus (issue 18, part A): the templates and macro-enabled files of
`bad/` are listed and read (`has_macros` on the SimpleMacro ones), the two .xlsb files are
listed (read, or `corrupt` with the reason), the encrypted files whose password SOURCES.tsv
names open with a passwords file holding it, and the VelvetSweatshop and empty-password files
open with none. Files are read as the server reads them (`run_job`), in this process."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpe_server.catalog.folder import scan
from dpe_server.isolation.client import InlineJobs, run_inline
from dpe_server.isolation.passwords import NO_PASSWORDS, Passwords, parse_passwords
from dpe_server.model.errors import ExtractionError
from dpe_server.model.tree import Document

TEMPLATES_AND_MACROS = {
    "bad/poi__SimpleMacro.docm": True,
    "bad/poi__SimpleMacro.pptm": True,
    "bad/poi__SimpleMacro.xlsm": True,
    "bad/poi__bug59273.potx": False,
    "bad/poi__test.dotx": False,
    "bad/poi__test.xltx": False,
}
XLSB = ("bad/poi__Simple.xlsb", "bad/calamine__issue_666_panic.xlsb")
"""An Excel 2007 beta file, and a fuzzed one."""
KNOWN_PASSWORDS = {
    "docx/tika__testWORD_protected_passtika.docx": "tika",
    "pptx/tika__testPPT_protected_passtika.pptx": "tika",
    "xlsx/poi__protected_passtika.xlsx": "tika",
    "xlsx/excelize__encryptAES.xlsx": "password",
    # Beyond msoffcrypto-tool 6.1 (ooxml/ecma376.py): an agile file whose SHA-1 hash must be
    # padded to its 256-bit AES key, a standard-encryption stream with a partial last block.
    "docx/poi__bug53475-password-is-pass.docx": "pass",
    "xlsx/poi__extenxls_pwd123.xlsx": "pwd123",
    "pdf/pdfjs__issue6010_2.pdf": "æøå",
    "pdf/pypdf__r4-aes-user-password.pdf": "asdfzxcv",
    "pdf/samplefiles__libreoffice-writer-password.pdf": "openpassword",
}
OPEN_WITH_NONE = (
    "docx/poi__protected_agile.docx",  # VelvetSweatshop
    "xlsx/poi__protect.xlsx",  # VelvetSweatshop
    "pdf/pypdf__r6-empty-password.pdf",
    "pdf/pypdf__r6-user-password.pdf",  # empty owner password
    "pdf/unstructured__copy-protected.pdf",
)


def read(corpus: Path, rel: str, passwords: Passwords = NO_PASSWORDS) -> Document:
    if not (corpus / rel).is_file():
        pytest.skip(f"{rel} is not in this corpus")
    return run_inline(InlineJobs(passwords=passwords).extract(corpus, rel))


def error_of(corpus: Path, rel: str, passwords: Passwords = NO_PASSWORDS) -> ExtractionError:
    with pytest.raises(ExtractionError) as err:
        read(corpus, rel, passwords)
    return err.value


@pytest.fixture(scope="module")
def listed(corpus: Path) -> set[str]:
    return set(scan(corpus))


@pytest.mark.parametrize(("rel", "macros"), sorted(TEMPLATES_AND_MACROS.items()))
def test_templates_and_macro_files_are_listed_and_read(
    corpus: Path, listed: set[str], rel: str, macros: bool
) -> None:
    doc = read(corpus, rel)
    assert rel in listed
    assert doc.properties.page_count >= 1
    assert doc.metadata.get("has_macros", False) is macros


def test_xlsb_files_are_listed_and_read_or_corrupt_with_reason(
    corpus: Path, listed: set[str]
) -> None:
    beta, fuzzed = XLSB
    assert {beta, fuzzed} <= listed
    err = error_of(corpus, beta)  # an Excel 2007 beta file: calamine panics on it
    assert err.kind == "corrupt"
    assert "its reader failed (PanicException" in err.message
    assert read(corpus, fuzzed).properties.page_count == 1  # fuzzed, yet calamine reads it


def _passwords() -> Passwords:
    files: dict[str, object] = dict(KNOWN_PASSWORDS)
    return parse_passwords({"files": files, "default": ["not-it"]})


@pytest.mark.parametrize("rel", sorted(KNOWN_PASSWORDS))
def test_encrypted_files_open_with_their_password(corpus: Path, rel: str) -> None:
    assert error_of(corpus, rel).kind == "encrypted"
    doc = read(corpus, rel, _passwords())
    assert doc.properties.page_count >= 1
    assert any(p.elements for p in doc.pages)


@pytest.mark.parametrize("rel", OPEN_WITH_NONE)
def test_default_and_empty_passwords_open_without_a_passwords_file(corpus: Path, rel: str) -> None:
    doc = read(corpus, rel)
    assert any(p.elements for p in doc.pages)
