#!/usr/bin/env python3
"""The wheel check: dpe-server installed from its wheel, with no extras, serves the fixtures.

    python3 scripts/wheel_check.py

Proves that `dependencies` in pyproject.toml is complete without the libraries that only the
fixture builders and the tests use:

1. the project's wheel is built (`pip wheel --no-deps`, with the project virtualenv's pip);
2. a fresh virtualenv in a temporary folder gets `pip install <wheel>` (no extras; the
   dependencies come from the package index);
3. there, none of openpyxl, pptx, docx, reportlab, defusedxml can be imported, and pypdf's
   extras can (cryptography for AES, PIL for pdf pictures);
4. fixtures/build.py writes the fixture documents (with the project virtualenv, which has the
   fixture libraries), every file's mtime set as for the goldens;
5. that virtualenv's `dpe-server serve <fixtures> --transport stdio --no-watch --no-cache
   --ocr off` (as the goldens: what OCR reads depends on the engine installed) is driven over
   stdio by the SDK's `Client` from the project virtualenv: resources/list, then
   for every document Level 1 (metadata, and depth=pages), every page and every element, and
   Level 0; each json body (and each picture's size and digest) is compared with
   fixtures/expected/ (see fixtures/goldens.py).

Prints one closing line: PASS or FAIL with counts, or SKIP with the reason when the package
index cannot be reached (no network); exits 1 only on FAIL. The project virtualenv is `.venv`
(made by `python3 dev.py test`), else the python running this script.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import unquote

ROOT = Path(__file__).resolve().parents[1]
ABSENT = ("openpyxl", "pptx", "docx", "reportlab", "defusedxml")
"""Imported by the fixture builders and the tests only: a plain install must not have them."""
PRESENT = ("cryptography", "PIL")
"""pypdf's extras the server relies on (crypto: AES-encrypted PDFs; image: pdf pictures)."""
OFFLINE = (
    "NewConnectionError",
    "Failed to establish a new connection",
    "Temporary failure in name resolution",
    "Name or service not known",
    "Network is unreachable",
    "No route to host",
    "Connection refused",
    "ConnectTimeoutError",
    "ReadTimeoutError",
    "ProxyError",
    "SSLError",
)
"""What pip says when it cannot reach the index: such a failure is a SKIP, not a FAIL."""
STEP_TIMEOUT = 600
DRIVE_TIMEOUT = 240


class Skip(Exception):
    """The check cannot run here (the package index cannot be reached); not a failure."""


class Failed(Exception):
    """A real failure: the wheel does not build, install, import or serve as it should."""


def project_python() -> Path:
    """The project's own virtualenv (made by `dev.py`), else the python running this."""
    py = ROOT / ".venv" / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    return py if py.exists() else Path(sys.executable)


def venv_bin(folder: Path, name: str) -> Path:
    return folder / ("Scripts" if os.name == "nt" else "bin") / name


def _run(what: str, args: list[str | Path], cwd: Path, pip: bool = False) -> str:
    """Run a step, its output returned; a failure raises `Failed` (`Skip` for pip offline)."""
    try:
        done = subprocess.run(
            [str(a) for a in args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=STEP_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        if pip:  # pip retries an index that does not answer for longer than this
            raise Skip(f"the package index did not answer ({what}: {STEP_TIMEOUT} s)") from None
        raise Failed(f"{what} did not finish within {STEP_TIMEOUT} s") from None
    except OSError as exc:
        raise Failed(f"{what}: {exc}") from None
    if done.returncode == 0:
        return done.stdout
    output = (done.stdout + done.stderr).strip()
    tail = " | ".join(output.splitlines()[-3:])
    if pip and any(marker in output for marker in OFFLINE):
        raise Skip(f"the package index cannot be reached ({what}): {tail}")
    print(output, file=sys.stderr)
    raise Failed(f"{what} failed (exit {done.returncode}): {tail}")


def build_wheel(py: Path, dist: Path) -> Path:
    _run(
        "pip wheel",
        [py, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check", "-w", dist, ROOT],
        cwd=dist.parent,
        pip=True,
    )
    wheels = sorted(dist.glob("dpe_server-*.whl"))
    if len(wheels) != 1:
        raise Failed(f"pip wheel left {[w.name for w in wheels]} in {dist}")
    return wheels[0]


def fresh_install(project: Path, wheel: Path, folder: Path) -> int:
    """A new virtualenv (of the project's python) with the wheel installed, no extras; the
    number of packages in it."""
    _run("venv", [project, "-m", "venv", folder], cwd=folder.parent)
    py = venv_bin(folder, "python")
    pip: list[str | Path] = [py, "-m", "pip", "--disable-pip-version-check"]
    _run("pip install", [*pip, "install", "--quiet", wheel], cwd=folder.parent, pip=True)
    listed = json.loads(_run("pip list", [*pip, "list", "--format", "json"], cwd=folder.parent))
    return len(listed)


PROBE = """
import importlib.util, json, sys
import dpe_server
print(json.dumps({
    "present": [m for m in sys.argv[1].split(",") if importlib.util.find_spec(m)],
    "missing": [m for m in sys.argv[2].split(",") if not importlib.util.find_spec(m)],
    "package": dpe_server.__file__,
}))
"""


def probe_imports(folder: Path) -> None:
    """In the fresh virtualenv: no fixture library, pypdf's extras, the package installed."""
    py = venv_bin(folder, "python")
    args: list[str | Path] = [py, "-I", "-c", PROBE, ",".join(ABSENT), ",".join(PRESENT)]
    found = json.loads(_run("import probe", args, cwd=folder.parent))
    if found["present"]:
        raise Failed(f"a plain install brings fixture/test libraries: {found['present']}")
    if found["missing"]:
        raise Failed(f"a plain install lacks pypdf's extras: {found['missing']}")
    if not Path(found["package"]).resolve().is_relative_to(folder.resolve()):
        raise Failed(f"dpe_server was imported from {found['package']}, not the wheel")


def build_fixtures(py: Path, work: Path) -> Path:
    """fixtures/build.py into `work/fixtures` (the dpe:// host the goldens were made under)."""
    folder = work / "fixtures"
    _run("fixtures/build.py", [py, ROOT / "fixtures" / "build.py", folder], cwd=ROOT)
    return folder


def drive(py: Path, server: Path, folder: Path, work: Path) -> dict[str, Any]:
    """This script's --drive mode, with the project python (it has the mcp client). Its
    stderr (the server's too) is shown when the check fails."""
    report, log = work / "drive.json", work / "drive.log"
    args = [py, __file__, "--drive", "--server", server, "--folder", folder, "--report", report]
    with log.open("w", encoding="utf-8") as err:
        try:
            code = subprocess.call(
                [str(a) for a in args], cwd=work, stderr=err, timeout=DRIVE_TIMEOUT
            )
        except subprocess.TimeoutExpired:
            code = None
    result: dict[str, Any] = (
        json.loads(report.read_text(encoding="utf-8")) if report.exists() else {}
    )
    if code == 0 and result and not result["differences"]:
        return result
    print(log.read_text(encoding="utf-8").rstrip()[-4000:], file=sys.stderr)
    if result.get("differences"):
        print("\n\n".join(result["differences"]), file=sys.stderr)
        raise Failed(
            f"{result['differing']} of {result['expected']} golden json files differ "
            f"(missing, extra or changed) from fixtures/expected/"
        )
    if code is None:
        raise Failed(f"the client did not finish within {DRIVE_TIMEOUT} s")
    raise Failed(f"the client exited {code} ({'with' if result else 'without'} a report)")


class Laps:
    """Progress lines, each with the time its step took."""

    def __init__(self) -> None:
        self.last = time.monotonic()

    def __call__(self, done: str) -> None:
        now = time.monotonic()
        print(f"wheel-check: {done} ({now - self.last:.1f} s)", flush=True)
        self.last = now


def check() -> str:
    """The whole check; the detail of the PASS line."""
    py = project_python()
    lap = Laps()
    with tempfile.TemporaryDirectory(prefix="dpe-wheel-check-") as tmp:
        work = Path(tmp)
        (work / "dist").mkdir()
        wheel = build_wheel(py, work / "dist")
        lap(f"built {wheel.name}")
        packages = fresh_install(py, wheel, work / "venv")
        lap(f"installed it with no extras into a fresh virtualenv: {packages} packages")
        probe_imports(work / "venv")
        lap(f"none of {', '.join(ABSENT)} there; {', '.join(PRESENT)} there")
        folder = build_fixtures(py, work)
        lap("built the fixtures with the project virtualenv")
        got = drive(py, venv_bin(work / "venv", "dpe-server"), folder, work)
        lap(f"served them with the fresh install over stdio; {got['reads']} reads")
    return (
        f"{wheel.name} with no extras ({packages} packages, none of {', '.join(ABSENT)}) "
        f"served {got['documents']} documents: Level 0, {got['pages']} pages, "
        f"{got['elements']} elements; all {got['expected']} json goldens match "
        f"({got['pictures']} of them pictures)"
    )


def main() -> int:
    print("\n== wheel check", flush=True)
    started = time.monotonic()
    try:
        verdict, detail = "PASS", check()
    except Skip as exc:
        verdict, detail = "SKIP", str(exc)
    except Failed as exc:
        verdict, detail = "FAIL", str(exc)
    print(f"wheel check: {verdict} ({time.monotonic() - started:.0f} s) {detail}", flush=True)
    return 1 if verdict == "FAIL" else 0


# --drive: the client side, run with the project python.


async def _walk(server: Path, folder: Path) -> dict[str, Any]:
    import anyio
    import mcp_types as types
    from mcp import Client, MCPError, StdioServerParameters

    from dpe_server.model.uri import format_uri
    from fixtures import goldens

    for path in sorted(folder.rglob("*")):  # as the goldens were made
        if path.is_file():
            os.utime(path, (goldens.FIXED_MTIME, goldens.FIXED_MTIME))
    host = goldens.HOST
    norm = goldens.Normaliser(folder)
    root_uri = folder.resolve().as_uri() + "/"
    out: dict[str, str] = {}
    counts = {"documents": 0, "pages": 0, "elements": 0, "pictures": 0, "reads": 0}

    serve = [
        "serve",
        str(folder),
        "--transport",
        "stdio",
        "--no-watch",
        "--no-cache",
        "--ocr",
        "off",
    ]
    target = StdioServerParameters(
        command=str(server),
        args=[*serve, "--dpe-host", host, "--log-level", "warning"],
        cwd=folder.parent,
    )
    async with Client(target, cache=None, read_timeout_seconds=60) as client:

        async def read(uri: str, name: str) -> dict[str, Any]:
            """The json body of `uri`, recorded as the golden `name` (unless "")."""
            counts["reads"] += 1
            try:
                result = await client.read_resource(uri)
            except MCPError as exc:  # recorded, so that it shows as a difference
                out[f"{name or uri}.json"] = f"{uri}: MCPError {exc}\n"
                return {}
            first = result.contents[0]
            assert isinstance(first, types.TextResourceContents), uri
            if name:
                out[f"{name}.json"] = norm(first.text)
                blobs = [
                    c for c in result.contents[1:] if isinstance(c, types.BlobResourceContents)
                ]
                if blobs:
                    out[f"{name}.picture.json"] = goldens._pictures(blobs)
                    counts["pictures"] += 1
            body: dict[str, Any] = json.loads(first.text)
            return body

        async def listed() -> list[str]:
            found: list[str] = []
            cursor: str | None = None
            while True:
                page = await client.list_resources(cursor=cursor)
                found += [str(r.uri) for r in page.resources]
                cursor = page.next_cursor
                if not cursor:
                    return found

        def rel_of(file_uri: str) -> str:
            """The catalog's relative path: a child's is its container's, a NUL, its path."""
            path, _, fragment = file_uri.removeprefix(root_uri).partition("#")
            inner = [unquote(p) for p in fragment.split("!/")] if fragment else []
            return "\0".join([unquote(path), *inner])

        async def walk(doc_uri: str) -> None:
            document = await read(doc_uri, "")
            if not document:
                return
            doc_ref = document["doc_ref"]
            rel = goldens.golden_dir(rel_of(document["file_uri"]))
            await read(doc_uri, f"{rel}/document")
            listing = await read(f"{doc_uri}?depth=pages&limit=100", f"{rel}/pages")
            pages = [int(p["page_index"]) for p in listing.get("pages", [])]
            while listing.get("pages") and len(pages) < listing["page_total"]:
                listing = await read(f"{doc_uri}?depth=pages&offset={len(pages)}&limit=100", "")
                pages += [int(p["page_index"]) for p in listing.get("pages", [])]
            for index in pages:
                page_uri = format_uri(host, doc_ref, page_index=index)
                body = await read(page_uri, f"{rel}/pages/{index}")
                for element in body.get("elements", []):
                    element_id = str(element["element_id"])
                    uri = format_uri(host, doc_ref, element_id=element_id)
                    await read(uri, f"{rel}/elements/{element_id}")
                    counts["elements"] += 1
            counts["documents"] += 1
            counts["pages"] += len(pages)

        async def settled() -> None:  # Level 0 once no document is still being indexed
            with anyio.fail_after(60):
                while True:
                    docs = (await read(catalog, "")).get("documents", [])
                    if not any(d.get("indexing") for d in docs):
                        return
                    await anyio.sleep(0.1)

        catalog = format_uri(host)
        walked: set[str] = set()
        while True:  # extracting a document lists the documents inside it (docs/children.md)
            new = [uri for uri in await listed() if uri not in walked]
            if not new:
                break
            for doc_uri in new:
                walked.add(doc_uri)
                await walk(doc_uri)
            await settled()
        await read(catalog, "catalog")

    want = {k: v for k, v in goldens.committed().items() if k.endswith(".json")}
    found = goldens.differences(out, want)
    differing = len(set(want) ^ set(out)) + sum(
        1 for k in set(want) & set(out) if want[k] != out[k]
    )
    return {**counts, "expected": len(want), "differing": differing, "differences": found}


def drive_main(server: Path, folder: Path, report: Path) -> int:
    import anyio

    sys.path.insert(0, str(ROOT))
    result = anyio.run(_walk, server, folder)
    report.write_text(json.dumps(result), encoding="utf-8")
    return 1 if result["differences"] else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--drive", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--server", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--report", type=Path, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.drive:
        sys.exit(drive_main(options.server, options.folder, options.report))
    sys.exit(main())
