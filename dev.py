#!/usr/bin/env python3
"""The project's everyday commands, on any machine with Python 3.11+ and nothing else.

    python3 dev.py serve [dpe-server serve options]   set up, serve fixtures/ (stdio)
    python3 dev.py test [pytest options]              set up, then lint, type-check and test
    python3 dev.py fixtures [--out DIR]               set up, rebuild the fixture documents
                                                      (fixtures/ by default; commit them)
    python3 dev.py bundle [--ocr] [--out DIR]         set up, write the MCP Bundle
                                                      (dist/dpe-server-VERSION.mcpb)

Set-up is a virtualenv in .venv with the project installed in editable mode; it is redone
only when pyproject.toml changes.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / ("python.exe" if os.name == "nt" else "python")
PASSWORDS = Path("fixtures") / "passwords.toml"
"""The passwords of the fixture documents protected on purpose (relative to ROOT)."""


def run(*args: str | Path) -> None:
    code = subprocess.call([str(a) for a in args], cwd=ROOT)
    if code:
        sys.exit(code)


def beside(side: list[str], main: list[str], env: dict[str, str] | None = None) -> int:
    """Run `main` (in `env`) while `side` runs beside it (mypy, one core, ~13 s from a fresh
    clone, fits where the tests wait on servers); `side`'s report follows; the first failure's
    status."""
    with tempfile.TemporaryFile() as report:
        other = subprocess.Popen([str(PY), *side], cwd=ROOT, stdout=report, stderr=report)
        try:
            code = subprocess.call([str(PY), *main], cwd=ROOT, env=env)
        except BaseException:  # Ctrl-C: stop it too
            other.kill()
            raise
        other_code = other.wait()
        report.seek(0)
        sys.stdout.flush()
        sys.stdout.write(report.read().decode("utf-8", "replace"))
    return code or other_code


def setup(extra: str = "") -> None:
    if sys.version_info < (3, 11):  # noqa: UP036 (dev.py may run on an older python3)
        sys.exit(f"dpe-server needs Python 3.11 or newer; this is {sys.version.split()[0]}.")
    if not PY.exists():
        print("creating .venv", file=sys.stderr)
        venv.EnvBuilder(with_pip=True).create(VENV)
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()[:16]
    stamp = VENV / f".installed-{extra}-{digest}"
    target = f".[{extra}]" if extra else "."
    if not stamp.exists():
        print(f"installing dpe-server{target[1:]} into .venv", file=sys.stderr)
        run(
            PY,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "-e",
            target,
        )
        stamp.touch()


def protected_on_purpose() -> str:
    """The line saying which fixture documents will be listed `encrypted`, and why."""
    names = list(tomllib.loads((ROOT / PASSWORDS).read_text(encoding="utf-8"))["files"])
    return (
        f"dev.py: {len(names)} fixtures are password-protected on purpose and listed "
        f"`encrypted` ({', '.join(names)}); to open them: "
        f"python3 dev.py serve --passwords {Path(os.path.relpath(ROOT / PASSWORDS)).as_posix()}"
    )


def main(argv: list[str]) -> None:
    command, rest = (argv[0], argv[1:]) if argv else ("", [])
    if command == "serve":
        setup()  # the fixture documents are committed: nothing to build
        # Serve exactly the documents the goldens describe (fixtures/ also holds the builders,
        # the goldens and the sources of two documents), from a folder named `fixtures` so
        # that the host is local.dpe.fixtures as in the goldens.
        served = VENV / "served" / "fixtures"
        shutil.rmtree(served, ignore_errors=True)
        run(
            PY,
            "-c",
            "import sys, pathlib, fixtures.build as b; b.copy_documents(pathlib.Path(sys.argv[1]))",
            served,
        )
        if "--passwords" not in rest and not os.environ.get("DPE_SERVER_PASSWORDS"):
            print(protected_on_purpose(), file=sys.stderr)
        os.execv(BIN / "dpe-server", [str(BIN / "dpe-server"), "serve", str(served), *rest])
    elif command == "test":
        setup("dev")
        run(PY, "-m", "ruff", "check", ".")
        run(PY, "-m", "ruff", "format", "--check", ".")
        # The servers, workers and commands the tests start are fresh Python processes:
        # compiled here once, they do not each compile the package again where nothing
        # writes bytecode (PYTHONDONTWRITEBYTECODE set, as on this project's machines).
        run(PY, "-m", "compileall", "-q", "dpe_server", "fixtures", "tests")
        # On every core (pytest-xdist), a test module's tests in one worker so that a module's
        # fixtures are built once, modules handed out in file order (not most tests first,
        # which left the few slow tests of the sweeps for last); then the slowest tests
        # (docs/testing.md). Arguments given after `test` win (`-n 0`: in this process).
        # Two workers a core: many tests wait on a server (a notification, a deadline), and
        # a second worker uses the core meanwhile.
        workers = str(2 * (os.cpu_count() or 1))
        pytest = ["-m", "pytest", "-n", workers, "--dist", "loadfile", "--no-loadscope-reorder"]
        pytest += ["--durations=20"]
        # pytest rewrites the asserts of every test module in each of its workers (5 s of CPU
        # a worker to collect, 3 s with the rewritten modules cached): where it may write
        # bytecode, it keeps them beside the modules (tests/**/__pycache__) and the next runs'
        # workers read them instead.
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        sys.exit(beside(["-m", "mypy"], [*pytest, *rest], env))
    elif command == "fixtures":
        setup("fixtures")
        run(PY, ROOT / "fixtures" / "build.py", *rest)
    elif command == "bundle":
        # The dev extra: the bundle carries what the tests ran against (and --ocr its engine).
        setup("dev")
        run(PY, ROOT / "scripts" / "bundle.py", *rest)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
