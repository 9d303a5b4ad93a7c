"""`OneShotReader` (what `dpe-server read` of one document uses) answers as the server does.

The server's answers are the goldens (fixtures/expected/, made through `DpeApp.read`): every
Level 1, 2 and 3 golden of every fixture document must come out of the one-shot reader byte
for byte, whether the first read of a document is a page (a pdf or pptx is then extracted one
page at a time) or the document.
"""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from dpe_server.isolation import jobs
from dpe_server.model.errors import DocumentNotFound, ElementNotFound, PageNotFound
from dpe_server.model.uri import format_uri
from dpe_server.read.oneshot import OneShotReader
from dpe_server.views.render import Body
from fixtures import goldens

HOST = goldens.HOST
EXT = goldens.EXTENSIONS


@pytest.fixture(scope="module")
def folder(fixture_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return goldens.prepare(tmp_path_factory.mktemp("oneshot"), fixture_dir)


@pytest.fixture(scope="module")
def want() -> dict[str, str]:
    files = goldens.committed()
    assert files, f"fixtures/expected/ is empty: run `{goldens.REGENERATE}`"
    return files


def _uris(want: dict[str, str], doc: str, doc_ref: str) -> list[tuple[str, str]]:
    """(golden name, URI) of a document's Level 2 and 3 goldens, then its Level 1 ones."""
    out = []
    for name in sorted(want):
        if not name.startswith(f"{doc}/") or not name.endswith(".json"):
            continue
        tail = name[len(doc) + 1 : -len(".json")]
        if tail.startswith("pages/"):
            out.append((tail, format_uri(HOST, doc_ref, page_index=int(tail.split("/")[1]))))
        elif tail.startswith("elements/") and not tail.endswith(".picture"):
            out.append((tail, format_uri(HOST, doc_ref, element_id=tail.split("/")[1])))
    base = format_uri(HOST, doc_ref)
    return [*out, ("document", base), ("pages", base + "?depth=pages&limit=100")]


def _picture(body: Body) -> dict[str, object]:
    data = base64.b64decode(body.blob or "")
    return {
        "mime_type": body.mime_type,
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
    }


def test_every_golden_of_levels_1_to_3(folder: Path, want: dict[str, str]) -> None:
    norm = goldens.Normaliser(folder)
    limits = goldens.LIMITS  # OCR off, as the goldens were taken
    refs = {
        e.rel: e.doc_ref for e in OneShotReader(folder, HOST, cache=False, limits=limits).entries()
    }
    assert refs
    checked = 0
    for rel, doc_ref in refs.items():
        doc = goldens.golden_dir(rel)
        # A fresh reader per document: its first read is a page (per-page extraction of a pdf
        # or pptx), its last the document (from the outline that page reads built or not).
        with OneShotReader(folder, HOST, cache=False, limits=limits) as reader:
            for name, uri in _uris(want, doc, doc_ref):
                for fmt, ext in EXT.items():
                    variant = (
                        uri if fmt == "json" else f"{uri}{'&' if '?' in uri else '?'}format={fmt}"
                    )
                    got = reader.read(variant)
                    assert norm(got[0].text or "") == want[f"{doc}/{name}.{ext}"], variant
                    checked += 1
                    picture = want.get(f"{doc}/{name}.picture.json")
                    pictures = [_picture(b) for b in got[1:]]
                    wanted = [json.loads(picture)] if fmt == "json" and picture else []
                    assert pictures == wanted, variant
    assert checked > 1000  # every page and element of every fixture, in three formats


def test_the_persistent_cache_serves_a_second_process_without_parsing(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    with OneShotReader(folder, HOST, cache_dir=cache) as reader:
        entry = next(e for e in reader.entries() if e.rel.endswith("deck-everything.pptx"))
        base = format_uri(HOST, entry.doc_ref)
        first = [reader.read(base + "?depth=pages"), reader.read(base + "/pages/1")]

    def no_parse(job: jobs.Job) -> object:
        raise AssertionError(f"parsed {job.rel} ({job.op}) although it is cached")

    monkeypatch.setattr("dpe_server.isolation.client.run_job_here", no_parse)
    with OneShotReader(folder, HOST, cache_dir=cache) as reader:
        again = [reader.read(base + "?depth=pages"), reader.read(base + "/pages/1")]
    assert again == first


def test_one_page_of_a_pdf_is_read_without_the_others(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ops: list[tuple[str, tuple[int, ...]]] = []
    real = jobs.run_job_here

    def spy(job: jobs.Job) -> dict[str, object]:
        ops.append((job.op, job.pages))
        return real(job)

    monkeypatch.setattr("dpe_server.isolation.client.run_job_here", spy)
    with OneShotReader(folder, HOST, cache=False) as reader:
        entry = next(e for e in reader.entries() if e.rel.endswith("pdf_structure.pdf"))
        reader.read(format_uri(HOST, entry.doc_ref, page_index=1))
    assert ops == [("probe", ()), ("pages", (1,))]


def test_errors_name_what_is_missing(folder: Path) -> None:
    with OneShotReader(folder, HOST, cache=False) as reader:
        ref = next(e for e in reader.entries() if e.rel.endswith("deck-everything.pptx")).doc_ref
        with pytest.raises(DocumentNotFound, match="No document 'nope-000000'"):
            reader.read(format_uri(HOST, "nope-000000"))
        with pytest.raises(DocumentNotFound, match="Unknown host 'elsewhere'"):
            reader.read(f"dpe://elsewhere/{ref}")
        with pytest.raises(PageNotFound, match="Page 99 is out of range"):
            reader.read(format_uri(HOST, ref, page_index=99))
        with pytest.raises(ElementNotFound, match="No element 'p0-x1'"):
            reader.read(format_uri(HOST, ref, element_id="p0-x1"))
        with pytest.raises(ValueError, match="Level 0"):
            reader.read(format_uri(HOST))


@pytest.mark.parametrize("name", ["web-browser-saved.html", "epub3-nav.epub"])
def test_dpe_server_read_of_a_web_page_sets_up_no_search(
    folder: Path, tmp_path: Path, name: str
) -> None:
    """A one-shot read stores no search rows and searches nothing: it imports neither the
    search threads' pool (`concurrent.futures`) nor the query half of the index (`textquery`,
    its dataclasses, and `ranking`), nor builds the accent folding of the index's words
    (`ranking._folding`): a few ms of every `dpe-server read` each (issue 34)."""
    with OneShotReader(folder, HOST, cache=False) as reader:
        ref = next(e for e in reader.entries() if e.rel.endswith(name)).doc_ref
    uri = format_uri(HOST, ref) + "?depth=pages"
    report = (
        "searching = ('concurrent.futures', 'dpe_server.catalog.textquery',"
        " 'dpe_server.catalog.ranking')\n"
        "loaded = [m for m in searching if m in sys.modules]\n"
        "from dpe_server.catalog import ranking\n"
        "fold = ranking._folding\n"  # (built when imported, before: not a cached function)
        "built = not hasattr(fold, 'cache_info') or fold.cache_info().currsize > 0\n"
        "print(loaded, built, file=sys.stderr)\n"
    )
    out, said = _read_reporting(folder, tmp_path, uri, report)
    assert said == "[] False"
    assert json.loads(out)["page_count"] >= 1


@pytest.mark.parametrize("name", ["web-browser-saved.html", "epub3-nav.epub"])
def test_dpe_server_read_of_a_web_page_imports_no_process_module(
    folder: Path, tmp_path: Path, name: str
) -> None:
    """A web page or an e-book needs no OCR (its key holds no Tesseract probe), so its read
    imports no `subprocess` (which the probe's module imported at its own import: a few ms of
    every `dpe-server read`, issue 34)."""
    with OneShotReader(folder, HOST, cache=False) as reader:
        ref = next(e for e in reader.entries() if e.rel.endswith(name)).doc_ref
    uri = format_uri(HOST, ref) + "?depth=pages"
    report = "print('subprocess' in sys.modules, file=sys.stderr)\n"
    out, said = _read_reporting(folder, tmp_path, uri, report)
    assert said == "False"
    assert json.loads(out)["page_count"] >= 1


def test_dpe_server_read_of_a_document_starts_no_event_loop(folder: Path, tmp_path: Path) -> None:
    """The one-document read path is cheap to start: no asyncio, anyio, MCP SDK or workers."""
    with OneShotReader(folder, HOST, cache=False) as reader:
        ref = next(e for e in reader.entries() if e.rel.endswith("deck-everything.pptx")).doc_ref
    uri = format_uri(HOST, ref, page_index=0) + "?format=markdown"
    report = (
        "heavy = ('asyncio', 'anyio', 'mcp', 'multiprocessing')\n"
        "print(sorted(m for m in heavy if m in sys.modules), file=sys.stderr)\n"
    )
    out, said = _read_reporting(folder, tmp_path, uri, report)
    assert said == "[]"
    assert out.startswith("#")  # the slide, as Markdown


def _read_reporting(folder: Path, tmp_path: Path, uri: str, report: str) -> tuple[str, str]:
    """`dpe-server read` of `uri` in a fresh interpreter that then runs `report` (which
    prints to standard error what it found in the process): the read's standard output, and
    the last line `report` printed. The read must succeed."""
    code = (
        "import sys\n"
        "from dpe_server.cli.command import main\n"
        f"rc = main(['read', {str(folder)!r}, {uri!r}, '--dpe-host', {HOST!r},"
        f" '--cache-dir', {str(tmp_path / 'cache')!r}])\n"
        f"{report}"
        "sys.exit(rc)\n"
    )
    argv = [sys.executable, "-c", code]
    done = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout, done.stderr.strip().splitlines()[-1]
