"""What each test module costs in CPU, the measure the run is bound by (two cores, four
workers: a test's wall time is mostly other workers' CPU). Opt-in:
`python3 dev.py test -p tests.cpu_profile` prints, at the end, the CPU seconds of the 25
costliest modules and the total, counting each test's process, the processes it started
(reaped or still running: servers, their workers, LibreOffice, Tesseract) and theirs.

A module's servers shared between its tests are counted where they end (the last test's
teardown); a session fixture built once for every worker (tests/once.py) is counted in the
test that first asked for it. Linux only (it reads /proc); elsewhere it counts nothing.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Generator
from pathlib import Path

import pytest

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_spent: Counter[str] = Counter()


def _tree_cpu() -> float:
    """CPU seconds of this process and its descendants, living or reaped."""
    me = os.getpid()
    parent: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for name in os.listdir("/proc") if Path("/proc/self/stat").exists() else ():
        if not name.isdigit():
            continue
        try:
            fields = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent[int(name)] = int(fields[1])
        cpu[int(name)] = sum(int(x) for x in fields[11:15]) / _TICKS  # utime stime cutime cstime
    total = 0.0
    for pid, seconds in cpu.items():
        up = pid
        while up != me and up in parent and up > 1:
            up = parent[up]
        total += seconds if up == me else 0.0
    return total


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, None, None]:
    before = _tree_cpu()
    yield
    _spent[item.nodeid.split("::")[0]] += _tree_cpu() - before


def pytest_sessionfinish(session: pytest.Session) -> None:
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    folder = session.config._tmp_path_factory.getbasetemp()  # type: ignore[attr-defined]
    if worker:  # each worker leaves its share beside the others'; the controller adds them
        (folder.parent / f"cpu-{worker}.json").write_text(json.dumps(_spent))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    total: Counter[str] = Counter(_spent)
    base = terminalreporter.config._tmp_path_factory.getbasetemp()  # type: ignore[attr-defined]
    for path in base.glob("cpu-gw*.json"):
        total.update(json.loads(path.read_text()))
    terminalreporter.section("CPU seconds per test module")
    for module, seconds in total.most_common(25):
        terminalreporter.write_line(f"{seconds:8.1f}  {module}")
    terminalreporter.write_line(f"{sum(total.values()):8.1f}  in all ({len(total)} modules)")
