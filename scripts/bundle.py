#!/usr/bin/env python3
"""The MCP Bundle: dpe-server as one file that Claude Desktop installs with a click.

    python3 dev.py bundle [--ocr] [--out DIR]

Writes `DIR/dpe-server-<version>.mcpb` (`dist/` by default) for this platform and this
Python's minor version: a zip holding

- `manifest.json`: an MCPB manifest, version 0.3 (`manifest()`): name, version and
  description from the package, the two tools the server declares (it declares no prompt),
  `compatibility` (this platform, this Python's minor version), and `user_config`: the
  documents folder (a directory picker), an optional passwords file, OCR on or off, and the
  number of parsing processes, which `mcp_config` hands to `serve` with `${user_config.…}`;
- `server/main.py`: the entry point (`MAIN`): the carried libraries first on the path, then
  `dpe-server serve` with the values the host substituted;
- `server/lib/`: dpe_server and every library it imports at run time (the closure of its
  requirements, `--ocr` adding the `ocr` extra's), copied from the virtualenv that runs this
  (the project's `.venv`: the very versions its tests ran against), without bytecode;
- `icon.png`, drawn here (`icon_png()`).

The dependencies are carried (`server.type: python`, `server/lib`), not installed by `uv`:
manifest 0.3 has no `uv` server type (it came with 0.4, marked experimental), and a `python`
bundle must carry its dependencies. lxml, pypdfium2, python-calamine, pydantic-core,
watchfiles and cryptography are compiled, so a bundle serves the platform and the Python
minor version it was built with, which `compatibility` says. `--ocr` adds RapidOCR and
onnxruntime (about 440 MB unpacked against 77 MB): without it the OCR switch has no engine
to turn on, and scanned pages are listed without their text (docs/ocr.md).

The zip is deterministic: entries sorted, every date 1980-01-01.
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import json
import os
import struct
import sys
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dpe_server import PASSWORDS_ENV, __version__  # noqa: E402
from dpe_server.surface.tools import READ, SEARCH  # noqa: E402

NAME = "dpe-server"
MANIFEST_VERSION = "0.3"
DATE = (1980, 1, 1, 0, 0, 0)
SKIPPED = ("__pycache__", ".pyc")
"""What is never carried: bytecode (written by the Python that runs the bundle, if it may)."""

MAIN = '''\
"""dpe-server started from its MCP Bundle (manifest.json's mcp_config).

The libraries the bundle carries (server/lib) come first on the path. The host substitutes
what its user set (user_config) into the arguments: an option left without a value (empty,
or a `${user_config...}` not substituted) is dropped, so that the server's default holds;
OCR's switch reads as `--ocr auto` or `--ocr off`, a number of workers as a whole number.
"""

import os
import sys

LIB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib")
sys.path.insert(0, LIB)


def unset(value):
    return not value or value.startswith("${")


def arguments(argv):
    command, folder, *pairs = argv
    out = [command, folder]
    for option, value in zip(pairs[::2], pairs[1::2]):
        if unset(value):
            continue
        if option == "--ocr":
            value = {"true": "auto", "false": "off"}.get(value, value)
        elif option == "--workers":
            value = str(int(float(value)))
        out += [option, value]
    return out


if unset(os.environ.get("PASSWORDS_ENV", "")):
    os.environ.pop("PASSWORDS_ENV", None)
sys.argv[1:] = arguments(sys.argv[1:])

from dpe_server.cli.command import main  # noqa: E402

sys.exit(main())
'''.replace("PASSWORDS_ENV", PASSWORDS_ENV)


def _project() -> dict[str, Any]:
    import tomllib

    project: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    return project


def python_range() -> str:
    """This Python's minor version: the compiled libraries carried are built for it."""
    major, minor = sys.version_info[:2]
    return f">={major}.{minor},<{major}.{minor + 1}"


def manifest(ocr: bool) -> dict[str, Any]:
    project = _project()
    engine = (
        "Recognise the text of scanned pages and pictures (RapidOCR, on this computer)."
        if ocr
        else "This bundle carries no OCR engine: scanned pages are listed without their text."
    )
    return {
        "manifest_version": MANIFEST_VERSION,
        "name": NAME,
        "display_name": "DPE documents",
        "version": __version__,
        "description": project["description"],
        "long_description": (
            "Serves the office files of one folder (xlsx, pdf, pptx, docx, their OpenDocument "
            "and legacy cousins, csv) as Document-Page-Element trees: each sheet, pdf page, "
            "slide or section a page of typed elements (headings, text, tables, charts, "
            "images...), read by their dpe:// URIs as JSON, Markdown or plain text, with a "
            "full-text search. Every file is parsed in a separate process under a time and "
            "memory limit; nothing leaves the computer."
        ),
        "author": {"name": "The dpe-server authors"},
        "license": project["license"],
        "icon": "icon.png",
        "keywords": ["documents", "office", "pdf", "xlsx", "docx", "pptx", "search"],
        "server": {
            "type": "python",
            "entry_point": "server/main.py",
            "mcp_config": {
                "command": "python" if sys.platform == "win32" else "python3",
                "args": [
                    "${__dirname}/server/main.py",
                    "serve",
                    "${user_config.documents}",
                    "--workers",
                    "${user_config.workers}",
                    "--ocr",
                    "${user_config.ocr}",
                ],
                "env": {
                    "PYTHONPATH": "${__dirname}/server/lib",
                    PASSWORDS_ENV: "${user_config.passwords}",
                },
            },
        },
        "tools": [{"name": t.name, "description": t.description or ""} for t in (READ, SEARCH)],
        "prompts": [],
        "compatibility": {
            "platforms": [sys.platform],
            "runtimes": {"python": python_range()},
        },
        "user_config": {
            "documents": {
                "type": "directory",
                "title": "Documents folder",
                "description": "The folder whose documents are served (and watched for changes).",
                "required": True,
                "default": "${DOCUMENTS}",
            },
            "passwords": {
                "type": "file",
                "title": "Passwords file",
                "description": (
                    "Optional: a TOML file of passwords to try on protected files (a `default` "
                    "list, and a [files] table of glob patterns to passwords)."
                ),
                "required": False,
                "sensitive": True,
            },
            "ocr": {
                "type": "boolean",
                "title": "OCR",
                "description": engine,
                "required": False,
                "default": ocr,
            },
            "workers": {
                "type": "number",
                "title": "Parsing processes",
                "description": "How many files are parsed at once; 0: one per processor core.",
                "required": False,
                "default": 0,
                "min": 0,
                "max": 64,
            },
        },
    }


def closure(extras: frozenset[str]) -> list[md.Distribution]:
    """dpe-server's distributions and those it requires at run time, with `extras` of its
    own, as installed here (markers evaluated for this interpreter)."""
    found: dict[str, tuple[md.Distribution, frozenset[str]]] = {}
    todo: list[tuple[str, frozenset[str]]] = [(NAME, extras)]
    while todo:
        name, wanted = todo.pop()
        key = canonicalize_name(name)
        if key in found and wanted <= found[key][1]:
            continue
        dist = md.distribution(name)
        wanted |= found[key][1] if key in found else frozenset()
        found[key] = (dist, wanted)
        for line in dist.requires or []:
            req = Requirement(line)
            environments = [{"extra": extra} for extra in sorted(wanted) or [""]]
            if req.marker is None or any(req.marker.evaluate(e) for e in environments):
                todo.append((req.name, frozenset(req.extras)))
    return [found[key][0] for key in sorted(found)]


def _carried(name: str) -> bool:
    return not any(part in name for part in SKIPPED)


def lib_files(dists: list[md.Distribution]) -> Iterator[tuple[str, Path]]:
    """(path inside server/lib, file) for every file of `dists` installed in site-packages;
    dpe_server itself from this checkout (its installed form is an editable path entry)."""
    for dist in dists:
        if canonicalize_name(dist.metadata["Name"]) == NAME:
            for path in sorted((ROOT / "dpe_server").rglob("*")):
                rel = path.relative_to(ROOT).as_posix()
                if path.is_file() and _carried(rel):
                    yield rel, path
            info = f"dpe_server-{__version__}.dist-info"
            for member in ("METADATA", "WHEEL", "entry_points.txt"):
                path = Path(str(dist.locate_file(f"{info}/{member}")))
                if path.is_file():
                    yield f"{info}/{member}", path
            continue
        for file in dist.files or []:
            rel = file.as_posix()
            path = Path(str(dist.locate_file(file)))
            if rel.startswith("..") or not _carried(rel) or not path.is_file():
                continue  # scripts outside site-packages; bytecode
            yield rel, path


def icon_png(size: int = 512) -> bytes:
    """A page with element boxes drawn on it (heading, text lines, a table), as a PNG."""
    white, ink = (255, 255, 255, 255), (40, 52, 72, 255)
    boxes = [  # (x0, y0, x1, y1) in eighths of the icon, colour
        ((2.0, 1.4, 6.0, 2.0), (37, 99, 235, 255)),
        ((2.0, 2.6, 6.0, 2.9), (148, 163, 184, 255)),
        ((2.0, 3.2, 5.4, 3.5), (148, 163, 184, 255)),
        ((2.0, 4.2, 6.0, 6.4), (22, 163, 74, 255)),
    ]
    unit = size / 8
    rows = []
    for y in range(size):
        row = bytearray(b"\x00")
        for x in range(size):
            u, v = x / unit, y / unit
            colour = (0, 0, 0, 0)
            if 1.2 <= u <= 6.8 and 0.6 <= v <= 7.4:
                edge = min(u - 1.2, 6.8 - u, v - 0.6, 7.4 - v) < 0.12
                colour = ink if edge else white
                for (x0, y0, x1, y1), fill in boxes:
                    if x0 <= u <= x1 and y0 <= v <= y1:
                        colour = fill
            row += bytes(colour)
        rows.append(bytes(row))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"".join(rows), 9))
        + chunk(b"IEND", b"")
    )


def _entry(name: str, mode: int = 0o644) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, DATE)
    info.external_attr = (0o100000 | mode) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    return info


def build(out: Path, ocr: bool = False) -> Path:
    """Write the bundle into `out`; its path."""
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{NAME}-{__version__}.mcpb"
    members: dict[str, bytes | Path] = {
        "manifest.json": (json.dumps(manifest(ocr), indent=2) + "\n").encode(),
        "icon.png": icon_png(),
        "server/main.py": MAIN.encode(),
    }
    for rel, path in lib_files(closure(frozenset({"ocr"} if ocr else ()))):
        members[f"server/lib/{rel}"] = path
    partial = target.with_suffix(".mcpb.partial")
    with zipfile.ZipFile(partial, "w") as z:
        for name in sorted(members):
            data = members[name]
            if isinstance(data, Path):
                mode = 0o755 if os.access(data, os.X_OK) else 0o644
                z.writestr(_entry(name, mode), data.read_bytes())
            else:
                z.writestr(_entry(name), data)
    partial.replace(target)
    return target


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "dist", help="default: dist/")
    parser.add_argument("--ocr", action="store_true", help="carry the OCR engine (+360 MB)")
    args = parser.parse_args(argv)
    path = build(args.out, args.ocr)
    print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
