"""The official MCP conformance suite's server scenarios, against the server over HTTP.

`conformance server --url URL --expected-failures conformance-expected-failures.yml`: the
suite exits 0 when every scenario passes except those listed (with their reasons) in the
baseline, and 1 on a regression or on a listed scenario that now passes (a stale baseline).
Its own output goes to .cache/interop/logs/conformance.log; only a summary is printed here
(the suite's closing line looks like a test runner's and would be misread by CI).
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from installs import CACHE, Node
from servers import http_server

BASELINE = Path(__file__).resolve().parent / "conformance-expected-failures.yml"
TIMEOUT = 600
SCENARIO_LINE = re.compile(r"^([✓✗])\s+(\S+):\s+(\d+) passed, (\d+) failed", re.MULTILINE)


@dataclass
class Outcome:
    ok: bool
    passed: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    detail: str = ""
    log: Path = CACHE / "logs" / "conformance.log"


def expected_failures() -> set[str]:
    """The scenario names listed in the baseline (a plain reading of its one YAML list)."""
    names = set()
    for line in BASELINE.read_text().splitlines():
        match = re.match(r"^\s*-\s*([\w-]+)", line)
        if match:
            names.add(match.group(1))
    return names


def run(runtime: Node, folder: Path) -> Outcome:
    outcome = Outcome(ok=False)
    outcome.log.parent.mkdir(parents=True, exist_ok=True)
    with http_server(folder) as server, tempfile.TemporaryDirectory() as results:
        args = [
            str(runtime.bin("conformance")),
            "server",
            "--url",
            server.url,
            "--expected-failures",
            str(BASELINE),
            "--output-dir",
            results,
        ]
        try:
            done = subprocess.run(
                args, env=runtime.env, capture_output=True, text=True, timeout=TIMEOUT, check=False
            )
        except subprocess.TimeoutExpired:
            outcome.detail = f"the suite did not finish within {TIMEOUT} s"
            return outcome
    output = done.stdout + done.stderr
    outcome.log.write_text(output)
    for mark, name, _passed, _failed in SCENARIO_LINE.findall(output):
        (outcome.passed if mark == "✓" else outcome.failed).append(name)
    expected = expected_failures()
    unexpected = sorted(set(outcome.failed) - expected)
    stale = sorted(expected & set(outcome.passed))
    outcome.ok = done.returncode == 0 and bool(outcome.passed)
    if unexpected:
        outcome.detail += f" unexpected failures: {', '.join(unexpected)};"
    if stale:
        outcome.detail += f" listed as expected but now passing: {', '.join(stale)};"
    if not outcome.passed:
        outcome.detail += f" no scenario ran (exit {done.returncode});"
    return outcome
