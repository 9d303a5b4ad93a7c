"""Interop checks: dpe-server driven by other people's MCP clients.

    python3 scripts/interop [PART ...]      parts: mcp1 inspector conformance mcpb (default: all)

- mcp1: the mcp 1.x Python SDK (its own virtualenv) over stdio and streamable HTTP:
  initialize, paged resources/list, templates, every level in every format, errors,
  completion, subscribe + edit -> `updated`, add/delete -> `list_changed`.
- inspector: the MCP Inspector CLI (Node >= 22): resources/list, templates, resources/read at
  each level, over HTTP and stdio.
- conformance: the official MCP conformance suite over HTTP, with the expected failures in
  conformance-expected-failures.yml (scenarios that need the suite's own fixtures).
- mcpb: the MCP Bundle (scripts/bundle.py) built, then `mcpb validate` on its manifest and
  `mcpb info` on it, with the official MCP Bundles CLI (Node).

Everything is installed into .cache/interop/ on first use and reused after. A part whose
tools cannot be installed (no network, no registry, no Node >= 22 for this platform) is
SKIPPED with the reason, not failed. Prints one summary line per part; exits 1 when a part
FAILED. The server serves a copy of the fixtures built by fixtures/build.py.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import conformance_suite
import inspector_cli
import mcpb_check
from installs import Node, Skip, mcp1_python, node, node_tools
from servers import documents, http_server, serve_command

PARTS = ("mcp1", "inspector", "conformance", "mcpb")
CLIENT = str(Path(__file__).resolve().parent / "mcp1_client.py")


@dataclass
class Result:
    part: str
    verdict: str  # PASS | FAIL | SKIP
    detail: str
    seconds: float


def _mcp1(transport: str) -> tuple[str, str]:
    py = mcp1_python()
    with documents() as folder:
        if transport == "http":
            with http_server(folder) as server:
                args = [str(py), CLIENT, "--folder", str(folder), "--url", server.url]
                code = subprocess.call(args, timeout=600)
        else:
            args = [str(py), CLIENT, "--folder", str(folder), "--stdio", *serve_command(folder)]
            code = subprocess.call(args, timeout=600)
    return ("PASS", "mcp 1.x client") if code == 0 else ("FAIL", f"client exit {code}")


def _inspector(runtime: Node) -> tuple[str, str]:
    node_tools(runtime)
    with documents() as folder:
        ins = inspector_cli.run(runtime, folder)
    total = ins.passed + len(ins.failed)
    if ins.failed:
        return "FAIL", f"{len(ins.failed)} of {total} checks went wrong: {'; '.join(ins.failed)}"
    return "PASS", f"{total}/{total} Inspector CLI checks ok"


def _conformance(runtime: Node) -> tuple[str, str]:
    node_tools(runtime)
    with documents() as folder:
        out = conformance_suite.run(runtime, folder)
    counts = (
        f"{len(out.passed)} scenarios ok, {len(out.failed)} expected failures (fixtures); "
        f"log: {out.log}"
    )
    return ("PASS", counts) if out.ok else ("FAIL", f"{out.detail.strip()} {counts}")


def _mcpb(runtime: Node) -> tuple[str, str]:
    node_tools(runtime)
    return mcpb_check.run(runtime)


def _timed(part: str, body: Callable[[], tuple[str, str]]) -> Result:
    print(f"\n== interop {part}", flush=True)
    start = time.monotonic()
    try:
        verdict, detail = body()
    except Skip as exc:
        verdict, detail = "SKIP", str(exc)
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        verdict, detail = "FAIL", f"{type(exc).__name__}: {exc}"
    return Result(part, verdict, detail, time.monotonic() - start)


def _node_parts(parts: list[str]) -> list[Result]:
    try:
        runtime = node()
    except Skip as exc:
        return [Result(part, "SKIP", str(exc), 0.0) for part in parts]
    print(f"interop: Node {runtime.version} at {runtime.binary}", flush=True)
    bodies = {"inspector": _inspector, "conformance": _conformance, "mcpb": _mcpb}
    return [_timed(part, partial(bodies[part], runtime)) for part in parts]


def main(argv: list[str]) -> int:
    wanted = argv or list(PARTS)
    unknown = [p for p in wanted if p not in PARTS]
    if unknown:
        print(f"unknown part(s) {unknown}; parts are {', '.join(PARTS)}", file=sys.stderr)
        return 2
    started = time.monotonic()
    results: list[Result] = []
    if "mcp1" in wanted:
        results.append(_timed("mcp1-stdio", lambda: _mcp1("stdio")))
        results.append(_timed("mcp1-http", lambda: _mcp1("http")))
    node_parts: list[str] = [p for p in ("inspector", "conformance", "mcpb") if p in wanted]
    if node_parts:
        results += _node_parts(node_parts)
    print("\ninterop summary")
    for r in results:
        print(f"  {r.part:<12} {r.verdict}  ({r.seconds:.0f} s) {r.detail}")
    print(f"  total time {time.monotonic() - started:.0f} s")
    return 1 if any(r.verdict == "FAIL" for r in results) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
