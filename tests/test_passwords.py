"""Protected files (issue 18, part A): the passwords file, decryption of OOXML (msoffcrypto-tool)
and PDF (pypdf) with the passwords given for a file, `VelvetSweatshop` and the empty password
tried first, a cache that stops serving a tree whose password is taken away, and no password
ever leaving the worker's memory (logs, errors, the cache file, a worker's command line and
environment)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from dpe_server.isolation.client import InlineJobs, run_inline
from dpe_server.isolation.passwords import (
    NO_PASSWORDS,
    Passwords,
    PasswordsFileError,
    load_passwords,
    parse_passwords,
)
from dpe_server.isolation.workers import ProcessBackend, WorkerSettings
from dpe_server.model.errors import ExtractionError
from dpe_server.model.tree import Document
from dpe_server.read.reader import local_reader
from fixtures.builders import protected
from fixtures.builders.protected import encrypt, plain_docx

PDF_PASSWORD = "pdfsent"
"""The user password of the pdf_encrypted.pdf fixture (fixtures/builders/pdf.py)."""
OTHER = "PX-never-given-password"


def extract(root: Path, rel: str, passwords: Passwords = NO_PASSWORDS) -> Document:
    return run_inline(InlineJobs(passwords=passwords).extract(root, rel))


def error_of(root: Path, rel: str, passwords: Passwords = NO_PASSWORDS) -> ExtractionError:
    with pytest.raises(ExtractionError) as err:
        extract(root, rel, passwords)
    return err.value


def words(doc: Document) -> str:
    return " ".join(str(e.content) for p in doc.pages for e in p.elements)


# ---- the passwords file ------------------------------------------------------------------


def test_passwords_for_a_path_patterns_then_default() -> None:
    pw = parse_passwords(
        {
            "default": ["d1", "shared"],
            "files": {"finance/*.xlsx": ["f1", "shared"], "board.pdf": "b1", "/x/*": ["x1"]},
        }
    )
    assert pw.for_path("finance/q3.xlsx") == ("f1", "shared", "d1")
    assert pw.for_path("finance/sub/q3.xlsx") == ("f1", "shared", "d1")  # `*` crosses `/`
    assert pw.for_path("minutes/board.pdf") == ("b1", "d1", "shared")  # name-only pattern
    assert pw.for_path("x/y.docx") == ("x1", "d1", "shared")  # a leading `/` is the folder
    assert pw.for_path("other.docx") == ("d1", "shared")
    assert NO_PASSWORDS.for_path("other.docx") == ()


def test_digest_says_which_entries_apply_never_a_password() -> None:
    full = parse_passwords({"default": ["d1"], "files": {"a/*": ["s1", "s2"]}})
    shorter = parse_passwords({"default": ["d1"], "files": {"a/*": ["s1"]}})
    without = parse_passwords({"default": ["d1"]})
    digests = {full.digest("a/b.docx"), shorter.digest("a/b.docx"), without.digest("a/b.docx")}
    assert len(digests) == 3
    assert full.digest("c.docx") == without.digest("c.docx")  # the entry does not apply
    assert NO_PASSWORDS.digest("a/b.docx") == ""
    for secret in ("s1", "s2", "d1"):
        assert all(secret not in d for d in digests)
    assert "s1" not in repr(full)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('default = ["sekrit-pw", oops]', "not valid TOML"),
        ('default = "sekrit-pw"\nextra = 1', "unknown key 'extra'"),
        ("default = [1, 2]", "`default` must be"),
        ('files = "sekrit-pw"', "[files] must be a table"),
        ('[files]\n"*.pdf" = [3]', "the entry of pattern '*.pdf'"),
    ],
)
def test_a_bad_passwords_file_is_named_without_its_passwords(
    tmp_path: Path, text: str, reason: str
) -> None:
    path = tmp_path / "pw.toml"
    path.write_text(text)
    with pytest.raises(PasswordsFileError) as err:
        load_passwords(path)
    assert reason in str(err.value)
    assert "sekrit" not in str(err.value)


def test_cli_refuses_a_bad_passwords_file(tmp_path: Path) -> None:
    (tmp_path / "pw.toml").write_text('default = ["sekrit-pw"')
    (tmp_path / "docs").mkdir()
    run = subprocess.run(
        [
            *_dpe(),
            "read",
            str(tmp_path / "docs"),
            "dpe://local.dpe.docs",
            "--passwords",
            str(tmp_path / "pw.toml"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode != 0
    assert "passwords file" in run.stderr
    assert "sekrit" not in run.stderr + run.stdout


def _dpe() -> list[str]:
    import sys

    return [sys.executable, "-m", "dpe_server"]


# ---- decryption --------------------------------------------------------------------------


def test_velvet_sweatshop_ooxml_opens_with_no_passwords(fixture_dir: Path) -> None:
    doc = extract(fixture_dir, protected.XLSX)
    assert "PX-velvet-row" in words(doc)


def test_protected_ooxml_opens_with_its_password(fixture_dir: Path) -> None:
    err = error_of(fixture_dir, protected.DOCX)
    assert err.kind == "encrypted"
    assert "--passwords FILE" in err.message
    assert "DPE_SERVER_PASSWORDS" in err.message
    wrong = Passwords(default=(OTHER,))
    assert error_of(fixture_dir, protected.DOCX, wrong).kind == "encrypted"
    right = parse_passwords({"default": [OTHER], "files": {"protected-*.docx": protected.SECRET}})
    doc = extract(fixture_dir, protected.DOCX, right)
    assert "PX-secret paragraph" in words(doc)
    assert protected.SECRET not in str(doc.to_json())


def test_protected_pdf_opens_with_its_password(fixture_dir: Path) -> None:
    err = error_of(fixture_dir, "pdf_encrypted.pdf")
    assert err.kind == "encrypted"
    assert "--passwords FILE" in err.message
    doc = extract(fixture_dir, "pdf_encrypted.pdf", Passwords(default=(OTHER, PDF_PASSWORD)))
    assert doc.properties.page_count >= 1
    assert extract(fixture_dir, "pdf_owner_only.pdf").properties.page_count >= 1


@pytest.mark.anyio
async def test_a_long_default_list_none_of_which_opens_the_file_is_encrypted(
    fixture_dir: Path,
) -> None:
    """Each password costs the file's key derivation (100,000 SHA-512 rounds): 300 of them
    outlast a probe's deadline. The tries stop at half of it, and the file is `encrypted`,
    saying how many were tried and how to have its own tried first; the old server let the
    probe run out and listed it `timeout`, "may be too large or malformed"."""
    many = Passwords(default=tuple(f"{OTHER}-{i}" for i in range(300)))
    settings = WorkerSettings(workers=1, probe_timeout=8.0, passwords=many)
    pb = ProcessBackend(settings)
    try:
        await pb.probe(fixture_dir, protected.XLSX)  # the worker started: its seconds not counted
        with pytest.raises(ExtractionError) as raised:
            await pb.probe(fixture_dir, protected.DOCX)
    finally:
        await pb.aclose()
    err = raised.value
    assert err.kind == "encrypted"
    assert "of the 301 passwords were tried, in 4 s" in err.message
    assert "[files] pattern" in err.message
    assert OTHER not in err.message


def test_every_password_is_tried_within_the_time(fixture_dir: Path) -> None:
    """A short list is tried whole: the message says nothing of untried passwords."""
    err = error_of(fixture_dir, protected.DOCX, Passwords(default=(OTHER, f"{OTHER}-2")))
    assert err.kind == "encrypted"
    assert "were tried" not in err.message
    assert "--passwords FILE" in err.message


def test_the_fixtures_passwords_file_opens_exactly_the_fixtures_protected_on_purpose(
    fixture_dir: Path,
) -> None:
    """fixtures/passwords.toml (which `dev.py serve` names) holds the passwords of every
    fixture the goldens list `encrypted`, and of no other."""
    import dev

    root = Path(__file__).resolve().parents[1]
    catalog = json.loads((root / "fixtures" / "expected" / "catalog.json").read_text())
    encrypted = {
        Path(d["file_uri"]).name
        for d in catalog["documents"]
        if d.get("error", {}).get("kind") == "encrypted"
    }
    passwords = load_passwords(root / dev.PASSWORDS)
    patterns = dict(passwords.patterns)
    assert set(patterns) == encrypted == {"pdf_encrypted.pdf", protected.DOCX}
    for name in sorted(encrypted):
        assert extract(fixture_dir, name, passwords).properties.page_count >= 1
    note = dev.protected_on_purpose()
    assert all(name in note for name in encrypted)
    assert "--passwords" in note
    assert note.endswith(dev.PASSWORDS.name)
    assert not any(pw in note for words in patterns.values() for pw in words)


# ---- the cache and leaks -----------------------------------------------------------------


def _children() -> list[int]:
    """Processes whose parent is this one (the workers)."""
    me = str(os.getpid())
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if stat.rsplit(")", 1)[1].split()[1] == me:
                out.append(int(entry.name))
    return out


@pytest.mark.anyio
@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs /proc")
async def test_password_never_leaks_and_its_removal_empties_the_cache(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level("DEBUG")
    root = tmp_path / "docs"
    root.mkdir()
    (root / "secret.docx").write_bytes(
        encrypt(plain_docx(["PX-Leak heading", "PX-body"]), protected.SECRET)
    )
    (root / "wrong.docx").write_bytes(encrypt(plain_docx(["Other"]), OTHER))
    pw_file = tmp_path / "pw.toml"
    pw_file.write_text(
        f'default = ["{protected.SECRET}"]\n[files]\n"wrong.*" = ["PX-wrong-guess-1"]\n'
    )
    cache = tmp_path / "cache"
    given = (protected.SECRET, "PX-wrong-guess-1")

    settings = WorkerSettings(workers=1, passwords=load_passwords(pw_file))
    async with local_reader(root, cache_dir=cache, workers=settings) as reader:
        await reader.catalog.warm()
        entries = {e.rel: e for e in reader.catalog.entries()}
        assert entries["secret.docx"].current
        assert entries["wrong.docx"].error is not None
        assert entries["wrong.docx"].error.kind == "encrypted"
        # A worker is alive: its command line and environment hold no password.
        workers = _children()
        assert workers
        ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True, check=True)
        seen = [ps.stdout]
        for pid in workers:
            seen.append(Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"))
            seen.append(Path(f"/proc/{pid}/environ").read_bytes().decode(errors="replace"))
        for info in reader.catalog.documents():
            seen.append(str(info))
    out, err = capfd.readouterr()
    seen += [caplog.text, out, err]
    for secret in given:
        assert not [s for s in seen if secret in s]
        for path in cache.rglob("*"):
            if path.is_file():
                data = path.read_bytes()
                assert secret.encode() not in data
                assert secret.encode("utf-16-le") not in data

    # Without its password, the tree decrypted before is not served from the cache.
    async with local_reader(root, cache_dir=cache, workers=WorkerSettings(workers=1)) as reader:
        await reader.catalog.warm()
        entries = {e.rel: e for e in reader.catalog.entries()}
        assert not entries["secret.docx"].current
        assert entries["secret.docx"].error is not None
        assert entries["secret.docx"].error.kind == "encrypted"


def test_cli_takes_the_passwords_file_from_the_environment(
    fixture_dir: Path, tmp_path: Path
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copy(fixture_dir / protected.DOCX, docs / protected.DOCX)
    pw_file = tmp_path / "pw.toml"
    pw_file.write_text(f'[files]\n"protected-*" = "{protected.SECRET}"\n')
    listing = {}
    for given in (None, str(pw_file)):
        env = {k: v for k, v in os.environ.items() if k != "DPE_SERVER_PASSWORDS"}
        if given:
            env["DPE_SERVER_PASSWORDS"] = given
        run = subprocess.run(
            [*_dpe(), "read", str(docs), "dpe://local.dpe.docs", "--no-cache", "--workers", "1"],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        )
        (doc,) = json.loads(run.stdout)["documents"]
        listing[given is not None] = doc
        assert protected.SECRET not in run.stdout + run.stderr
    assert listing[False]["error"]["kind"] == "encrypted"
    assert listing[True]["page_count"] == 1
    assert "error" not in listing[True]
