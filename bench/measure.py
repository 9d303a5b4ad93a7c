"""How `run.py` measures: whole processes (wall, CPU, peak RSS via wait4) and in-process calls
(each in a fresh child process running `inproc.py`), medians over runs, and markitdown's venv."""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
PYTHON = sys.executable


@dataclass
class Sample:
    seconds: float
    cpu: float | None
    peak_mb: float | None


@dataclass
class Stats:
    samples: list[Sample] = field(default_factory=list)
    note: str = ""

    @property
    def seconds(self) -> float:
        return statistics.median(s.seconds for s in self.samples)

    @property
    def cpu(self) -> float | None:
        values = [s.cpu for s in self.samples if s.cpu is not None]
        return statistics.median(values) if values else None

    @property
    def peak_mb(self) -> float | None:
        values = [s.peak_mb for s in self.samples if s.peak_mb is not None]
        return max(values) if values else None

    @property
    def runs(self) -> int:
        return len(self.samples)


class Failed(RuntimeError):
    """A measured command failed; the row says so instead of inventing a figure."""


def whole_process(argv: list[str], env: dict[str, str] | None = None) -> Sample:
    """Run `argv` to completion: wall seconds, CPU of it and its reaped children, peak RSS."""
    with tempfile.TemporaryFile() as err:
        start = _now()
        proc = subprocess.Popen(
            argv, stdout=subprocess.DEVNULL, stderr=err, env={**os.environ, **(env or {})}
        )
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = _now() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            tail = err.read().decode(errors="replace").strip().splitlines()[-3:]
            raise Failed(f"{Path(argv[0]).name} exited {proc.returncode}: {' | '.join(tail)}")
    # wait4 reports the child with its own reaped children (times summed, maxrss the largest).
    return Sample(seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def dpe_whole(root: Path, cache: Path) -> Sample:
    """`read_all.py` over the folder holding one file, on a fresh cache."""
    shutil.rmtree(cache, ignore_errors=True)
    rusage = cache.with_suffix(".rusage")
    sample = whole_process(
        [PYTHON, str(HERE / "read_all.py"), str(root), str(cache)], {"BENCH_RUSAGE": str(rusage)}
    )
    # The parse runs in worker processes: count the server and its largest worker together.
    sample.peak_mb = float(rusage.read_text())
    return sample


def in_process(name: str, path: Path, arg: str = "") -> tuple[Sample, str]:
    """One timed call in a fresh child (imports excluded from the time)."""
    out = subprocess.run(
        [PYTHON, str(HERE / "inproc.py"), name, str(path), arg],
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        tail = out.stderr.strip().splitlines()[-2:]
        raise Failed(f"{name} exited {out.returncode}: {' | '.join(tail)}")
    data = json.loads(out.stdout.strip().splitlines()[-1])
    return Sample(data["seconds"], data.get("cpu"), data["peak_mb"]), str(data["note"])


def alternate(
    runs: int, ours: Callable[[], Sample], base: Callable[[], Sample] | None
) -> tuple[Stats, Stats | str]:
    """`runs` of each side, alternated so that load on the machine falls on both alike."""
    a, b = Stats(), Stats()
    base_error = "" if base is not None else "not measured"
    for _ in range(runs):
        a.samples.append(ours())
        if base is not None and not base_error:
            try:
                b.samples.append(base())
            except Failed as exc:
                base_error = f"not measured ({exc})"
    return a, (base_error or b)


def _now() -> float:
    import time

    return time.perf_counter()


# ---- markitdown ------------------------------------------------------------------------------


def markitdown_venv(out: Path) -> tuple[Path | None, str]:
    """markitdown in its own virtualenv under `out`, installed on first use.

    Returns the venv's bin folder, or None and why (e.g. no network): rows then say
    "not measured".
    """
    venv = out / "venv-markitdown"
    bin_dir = venv / "bin"
    if (bin_dir / "markitdown").exists() and _imports(bin_dir):
        return bin_dir, _version(bin_dir)
    print("installing markitdown into", venv, "(once)", file=sys.stderr, flush=True)
    try:
        subprocess.run([PYTHON, "-m", "venv", str(venv)], check=True, capture_output=True)
        subprocess.run(
            [str(bin_dir / "pip"), "install", "-q", "markitdown[xlsx,pdf,pptx,docx]"],
            check=True,
            capture_output=True,
            timeout=900,
        )
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as exc:
        return None, f"markitdown could not be installed ({type(exc).__name__})"
    if not _imports(bin_dir):
        return None, "markitdown installed but does not import"
    return bin_dir, _version(bin_dir)


def _imports(bin_dir: Path) -> bool:
    probe = subprocess.run(
        [str(bin_dir / "python"), "-c", "import markitdown"], capture_output=True, check=False
    )
    return probe.returncode == 0


def _version(bin_dir: Path) -> str:
    probe = subprocess.run(
        [str(bin_dir / "python"), "-c", "import markitdown; print(markitdown.__version__)"],
        capture_output=True,
        text=True,
        check=False,
    )
    return f"markitdown {probe.stdout.strip()}"
