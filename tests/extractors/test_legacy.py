"""Legacy .doc / .rtf / .ppt (issue 18): converted by LibreOffice when `soffice` is on PATH
and read as docx / pptx; listed `unsupported` with how to enable them when it is not."""

from __future__ import annotations

import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Collection
from pathlib import Path

import pytest

from dpe_server.extractors import DEFAULT_LIMITS, extractor_fingerprint, for_path
from dpe_server.extractors.kit.soffice import sweep
from dpe_server.extractors.magic import CFB_MAGIC
from dpe_server.isolation.jobs import Job, run_job
from dpe_server.isolation.pictures import picture
from dpe_server.isolation.workers import ProcessBackend, WorkerSettings
from dpe_server.model.tree import Category, Document
from fixtures.builders import legacy

HAS_SOFFICE = shutil.which("soffice") is not None
needs_soffice = pytest.mark.skipif(
    not HAS_SOFFICE, reason="LibreOffice (soffice) is not on PATH: legacy files cannot be converted"
)


def _no_soffice(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    empty = tmp_path / "empty-path"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))


@pytest.mark.parametrize("name", ["doc-rich.rtf", "old.doc", "old.ppt"])
def test_without_soffice_listed_unsupported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    if name.endswith(".rtf"):
        legacy.rtf(folder)
    else:  # an OLE2 compound file holding the format's stream is all the checks look at
        stream = "WordDocument" if name.endswith(".doc") else "PowerPoint Document"
        (folder / name).write_bytes(legacy.ole2(stream, b"SENT"))
    _no_soffice(monkeypatch, tmp_path)
    for op in ("probe", "extract"):
        error = run_job(Job(str(folder), name, op))["error"]
        assert error["kind"] == "unsupported"
        assert "install" in error["message"]
        assert "LibreOffice" in error["message"]


def test_soffice_presence_is_part_of_the_cache_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "soffice").write_text("#!/bin/sh\nexit 1\n")
    (fake / "soffice").chmod(0o755)
    monkeypatch.setenv("PATH", str(fake))
    present = extractor_fingerprint()
    _no_soffice(monkeypatch, tmp_path)
    assert extractor_fingerprint() != present


def test_a_zip_named_doc_is_named(tmp_path: Path, fixture_dir: Path) -> None:
    shutil.copyfile(fixture_dir / "doc-plain.docx", tmp_path / "renamed.doc")
    error = run_job(Job(str(tmp_path), "renamed.doc", "probe"))["error"]
    assert error["kind"] == "unsupported"
    assert "Word document renamed to .doc" in error["message"]


def _read(path: Path) -> Document:
    extractor = for_path(path)
    assert extractor is not None
    with path.open("rb") as f:
        return extractor.extract(f, DEFAULT_LIMITS)


def _soffice_leftovers() -> set[str]:
    """This process's conversion folders (not the LibreOffice profile it keeps for its life;
    nor other processes' folders, which a conversion may sweep when they are gone)."""
    found = Path(tempfile.gettempdir()).glob(f"dpe-soffice-{os.getpid()}-*")
    return {p.name for p in found if "-profile-" not in p.name}


@needs_soffice
def test_rtf_read_through_libreoffice(tmp_path: Path) -> None:
    path = legacy.rtf(tmp_path)
    before, temps = sorted(os.listdir(tmp_path)), _soffice_leftovers()
    doc = _read(path)
    assert sorted(os.listdir(tmp_path)) == before  # nothing written beside the file
    assert _soffice_leftovers() == temps  # the private folder is gone
    assert doc.metadata["converted_by"] == "LibreOffice"
    assert doc.properties.title == "SENT-RTF-TITLE Rich report"
    assert [p.title for p in doc.pages] == ["SENT-RTF-H1 Overview", "SENT-RTF-H1 Second"]
    found = {(e.category, str(e.content)) for p in doc.pages for e in p.elements}
    cats = {c for c, _ in found}
    assert {Category.HEADING, Category.TEXT, Category.TABLE, Category.LINK} <= cats
    assert Category.ANNOTATION in cats
    assert any(c is Category.TABLE and "SENT-RTF-CELL North" in s for c, s in found)
    assert any(c is Category.LINK and "https://example.org/rtf" in s for c, s in found)
    assert any(c is Category.ANNOTATION and "SENT-RTF-FOOTNOTE" in s for c, s in found)


@needs_soffice
def test_doc_and_ppt_read_like_their_ooxml_source(tmp_path: Path, fixture_dir: Path) -> None:
    word, deck = fixture_dir / "doc-everything.docx", fixture_dir / "deck-everything.pptx"
    for source, suffix in ((word, "doc"), (deck, "ppt")):
        made = legacy.converted(source, suffix, tmp_path)
        assert made is not None
        original, converted = _read(source), _read(made)
        assert converted.metadata["converted_by"] == "LibreOffice"
        assert len(converted.pages) == len(original.pages)
        assert [p.title for p in converted.pages][:3] == [p.title for p in original.pages][:3]
        texts = {str(e.content) for p in converted.pages for e in p.elements}
        assert any("SENT" in t for t in texts)
        images = [e for p in converted.pages for e in p.elements if e.category is Category.IMAGE]
        shown = [e for e in images if "part" in e.metadata]
        assert shown, f"no picture survived the .{suffix} round trip"
        with made.open("rb") as f:
            found = picture(f, made.name, shown[0].metadata)
        assert found is not None  # a Level 3 read sends it, from the converted package
        assert found[1].startswith("image/")


@needs_soffice
@pytest.mark.anyio
async def test_conversion_runs_in_a_worker(tmp_path: Path) -> None:
    legacy.rtf(tmp_path)
    pb = ProcessBackend(WorkerSettings(workers=1))
    try:
        props = await pb.probe(tmp_path, legacy.RTF_FILE)
        doc = await pb.extract(tmp_path, legacy.RTF_FILE)
    finally:
        await pb.aclose()
    assert props.page_count == 2
    assert [p.title for p in doc.pages] == list(props.page_titles or ())


def _soffice_processes(fake: Path) -> list[int]:
    """Pids of the `soffice` at `fake` (a test's own hanging LibreOffice, `hanging_soffice`)
    converting in one of our private folders: another test's LibreOffice, started meanwhile
    by another worker of the run, is not this test's to count."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if b"dpe-soffice-" in cmdline and os.fsencode(fake) in cmdline:
            found.append(int(proc.name))
    return found


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _wait_until_gone(fake: Path, before: Collection[int] = (), seconds: float = 20.0) -> list[int]:
    """The runs of the `soffice` at `fake` still there after at most `seconds` (those running
    `before` the test are not waited for)."""
    import time

    deadline = time.monotonic() + seconds
    while (
        left := sorted(set(_soffice_processes(fake)) - set(before))
    ) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


@pytest.fixture
def hanging_soffice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `soffice` on PATH that never finishes (a LibreOffice stuck on a hostile file); its
    folder (`_soffice_processes` counts only its runs)."""
    fake = tmp_path / "hanging-bin"
    fake.mkdir()
    (fake / "soffice").write_text("#!/bin/sh\nwhile :; do sleep 0.1; done\n")
    (fake / "soffice").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}/usr/bin{os.pathsep}/bin")
    return fake


needs_proc = pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs /proc")


@needs_proc
def test_conversion_deadline_kills_libreoffice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hanging_soffice: Path
) -> None:
    from dpe_server.extractors.legacy import extract
    from dpe_server.model.errors import ExtractionTimeout

    monkeypatch.setattr(extract, "CONVERT_TIMEOUT", 0.5)
    path = legacy.rtf(tmp_path)
    path.write_text(path.read_text().replace("The end.", "The end, timed out."))
    before = _soffice_processes(hanging_soffice)
    with pytest.raises(ExtractionTimeout, match=r"LibreOffice took longer than 0\.5 seconds"):
        _read(path)
    assert set(_soffice_processes(hanging_soffice)) <= set(before)  # killed, not left to finish


@needs_proc
@pytest.mark.anyio
async def test_a_worker_killed_at_its_deadline_takes_libreoffice_with_it(
    tmp_path: Path, hanging_soffice: Path
) -> None:
    from dpe_server.model.errors import ExtractionTimeout

    path = legacy.rtf(tmp_path)
    (tmp_path / "warm.csv").write_text("a,b\n1,2\n")
    running = _soffice_processes(hanging_soffice)
    folders = set(Path(tempfile.gettempdir()).glob("dpe-soffice-*"))
    pb = ProcessBackend(WorkerSettings(workers=1, timeout=1.0))
    try:
        # The worker is started (and has imported the extractors) before the 1 s deadline
        # of the conversion runs: on a loaded machine its start alone can take longer, and
        # it would be killed before LibreOffice is.
        await pb.probe(tmp_path, "warm.csv")  # under the probe deadline, not the 1 s
        assert pb.started == 1
        with pytest.raises(ExtractionTimeout):
            await pb.extract(tmp_path, path.name)
    finally:
        await pb.aclose()
    assert _wait_until_gone(hanging_soffice, running) == []
    made = set(Path(tempfile.gettempdir()).glob("dpe-soffice-*")) - folders
    left = {p for p in made if not _alive(int(p.name.split("-")[2]))}  # the killed worker's
    assert left  # the killed worker could not remove its folders...
    sweep()
    assert not [p for p in left if p.exists()]  # ...the next conversion does


@needs_soffice
@pytest.mark.corpus
def test_legacy_files_of_the_corpus(corpus: Path, tmp_path: Path) -> None:
    """The corpus's .doc and .ppt (kept there renamed to OOXML suffixes), under their names."""
    for kept, name in (
        ("poi__SampleDoc.doc-renamed.docx", "SampleDoc.doc"),
        ("poi__SampleShow.ppt-renamed.pptx", "SampleShow.ppt"),
    ):
        (tmp_path / name).write_bytes((corpus / "bad" / kept).read_bytes())
    word = _read(tmp_path / "SampleDoc.doc")
    texts = [e.content.get("text") for p in word.pages for e in p.elements]
    assert "I am a test document" in texts
    assert any(e.category is Category.SEPARATOR for p in word.pages for e in p.elements)
    deck = _read(tmp_path / "SampleShow.ppt")
    assert [p.title for p in deck.pages] == ["Title of the first slide", "This is the second slide"]
    notes = [
        e.content["text"]
        for p in deck.pages
        for e in p.elements
        if e.category is Category.ANNOTATION
    ]
    assert notes[0] == "I am the notes of the first slide"


@pytest.mark.parametrize(
    ("name", "data", "kind", "message"),
    [
        ("not.rtf", b"plain text", "corrupt", "does not begin with {\\rtf"),
        ("not.ppt", b"\x00\x01 binary", "corrupt", "not an OLE2"),
        ("page.ppt", b"<html></html>", "unsupported", "a web page (HTML) named .ppt"),
        ("paper.ppt", b"%PDF-1.4\n", "unsupported", "PDF renamed to .ppt"),
    ],
)
def test_legacy_checks_before_converting(
    tmp_path: Path, name: str, data: bytes, kind: str, message: str
) -> None:
    (tmp_path / name).write_bytes(data)
    error = run_job(Job(str(tmp_path), name, "probe"))["error"]
    assert (error["kind"], message in error["message"]) == (kind, True)


def test_a_word_html_file_saved_as_doc_is_named(tmp_path: Path) -> None:
    """Word saves web pages under .doc too; LibreOffice would open one as HTML and load what
    it links, so it is listed for what it is, saying how to read it."""
    html = "<html><body><h1>SENT-HTML-H1 Heading</h1><img src='http://127.0.0.1:9/x'></body></html>"
    (tmp_path / "page.doc").write_text(html)
    error = run_job(Job(str(tmp_path), "page.doc", "probe"))["error"]
    assert error["kind"] == "unsupported"
    assert "web page (HTML) named .doc" in error["message"]
    assert "Save it as .docx" in error["message"]


@pytest.mark.parametrize(
    ("name", "data", "kind", "says"),
    [
        ("noise.ppt", CFB_MAGIC + random.Random(31).randbytes(6000), "corrupt", "damaged"),
        ("empty.ppt", legacy.ole2("Contents", b"SENT"), "corrupt", "'PowerPoint Document'"),
        ("book.ppt", legacy.ole2("Workbook", b"SENT"), "unsupported", "Excel .xls file renamed"),
        ("deck.doc", legacy.ole2("PowerPoint Document", b""), "unsupported", "PowerPoint .ppt"),
        ("word.rtf", legacy.ole2("WordDocument", b""), "unsupported", "Word .doc file renamed"),
        ("text.doc", b"just some text", "corrupt", "not a Word 97-2003 .doc"),
    ],
)
def test_only_true_legacy_bytes_pass_the_checks(
    tmp_path: Path, name: str, data: bytes, kind: str, says: str
) -> None:
    """An OLE2 file named .ppt must hold a PowerPoint stream (random bytes after an OLE2
    header were a healthy deck with 0 pages), one of another format is named, and no check
    waits for LibreOffice."""
    (tmp_path / name).write_bytes(data)
    for op in ("probe", "extract"):
        error = run_job(Job(str(tmp_path), name, op))["error"]
        assert error["kind"] == kind, error
        assert says in error["message"]


@needs_proc
def test_convert_refuses_what_is_not_legacy(hanging_soffice: Path) -> None:
    """The conversion itself checks the bytes (a LibreOffice started on them would hang)."""
    from dpe_server.extractors.legacy.convert import convert
    from dpe_server.model.errors import UnsupportedError

    before = _soffice_processes(hanging_soffice)
    page = b"<!DOCTYPE html><html><body><img src='http://127.0.0.1:9/x.png'></body></html>"
    for fmt in ("doc", "rtf", "ppt"):
        with pytest.raises(UnsupportedError, match="web page"):
            convert(page, fmt, 5.0)
    assert _soffice_processes(hanging_soffice) == before


def test_conversions_have_no_network() -> None:
    """What LibreOffice is started with: a child that cannot reach even this host."""
    from dpe_server.extractors.kit import sandbox

    if sandbox.network_isolation() == "none":
        pytest.skip("this platform gives no network namespace (the profile still blocks links)")
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        code = (
            "import socket, sys\n"
            "try:\n"
            f"    socket.create_connection(('127.0.0.1', {server.getsockname()[1]}), 5)\n"
            "except OSError:\n"
            "    sys.exit(7)\n"
        )
        isolated = subprocess.run(
            [sys.executable, "-c", code], preexec_fn=sandbox.child_setup(), check=False
        )
        plain = subprocess.run([sys.executable, "-c", code], check=False)
    assert (isolated.returncode, plain.returncode) == (7, 0)


def test_profile_follows_no_link(tmp_path: Path) -> None:
    from dpe_server.extractors.kit import sandbox

    sandbox.write_profile_settings(tmp_path)
    settings = (tmp_path / "user" / "registrymodifications.xcu").read_text()
    for prop, value in (
        ("BlockUntrustedRefererLinks", "true"),
        ("DisableMacrosExecution", "true"),
        ("ooInetHTTPProxyPort", "9"),
    ):
        assert f'oor:name="{prop}" oor:op="fuse"><value>{value}</value>' in settings


@pytest.mark.anyio
async def test_a_slow_conversion_is_not_cut_by_the_probe_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fixture_dir: Path
) -> None:
    """A conversion longer than the probe's deadline but within the extraction's (a 25 MB
    RTF: 28 s, where the probe's was 12 s and the read's 50 s) is probed and read, once."""
    fake = tmp_path / "slow-bin"
    fake.mkdir()
    counted = tmp_path / "conversions"
    (fake / "soffice").write_text(
        "#!/bin/sh\n"  # a LibreOffice that takes 2 s, then writes a real .docx
        'while [ "$#" -gt 1 ]; do [ "$1" = --outdir ] && out="$2"; shift; done\n'
        f"echo >> {counted}\n"
        "sleep 2\n"
        f'cp {fixture_dir / "doc-plain.docx"} "$out/document.docx"\n'
    )
    (fake / "soffice").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}/usr/bin{os.pathsep}/bin")
    legacy.rtf(tmp_path)
    pb = ProcessBackend(WorkerSettings(workers=1, probe_timeout=1.0, timeout=30.0))
    try:
        props = await pb.probe(tmp_path, legacy.RTF_FILE)
        doc = await pb.extract(tmp_path, legacy.RTF_FILE)
    finally:
        await pb.aclose()
    assert props.page_count == len(doc.pages) > 0
    assert doc.metadata["converted_by"] == "LibreOffice"
    assert counted.read_text() == "\n"  # the read reused the probe's conversion
