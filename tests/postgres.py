"""A real PostgreSQL server for the tests, started by the test suite itself.

The binaries come from the `pgserver` package (the dev extra bundles them) or else from the
distribution's server (`initdb` on PATH or under /usr/lib/postgresql). The server runs in a
fresh data folder on a free local port, as `nobody` when the tests run as root (PostgreSQL
refuses root), and is stopped at the end. `available()` says why it cannot run, if it cannot.
"""

from __future__ import annotations

import atexit
import contextlib
import glob
import importlib.util
import os
import re
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path


def bin_dir() -> Path | None:
    """Where initdb, pg_ctl and postgres are."""
    spec = importlib.util.find_spec("pgserver")  # not imported: only its binaries are used
    if spec is not None and spec.submodule_search_locations:
        bundled = Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
        if (bundled / "initdb").exists():
            return bundled
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    dists = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(dists[-1]).parent if dists else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


_PUBLIC: dict[Path, Path] = {}
"""Installations copied where `nobody` can run them, per original `bin` folder."""


def _runnable_by(user: str, bins: Path) -> Path:
    """`bins`, or a copy of its installation (bin/, lib/, share/) in a temporary folder open to
    everyone when `user` cannot reach it (a clone in a private folder, as CI makes)."""
    try:
        probe = subprocess.run(
            [str(bins / "initdb"), "--version"], capture_output=True, user=user, check=False
        )
        if probe.returncode == 0:
            return bins
    except OSError:  # cannot even be started as `user`
        pass
    if bins not in _PUBLIC:
        # pgserver's binaries find their libraries at $ORIGIN/../../../pgserver.libs: keep the
        # layout of site-packages/{pgserver/pginstall, pgserver.libs}.
        install, package = bins.parent, bins.parent.parent
        root = Path(tempfile.mkdtemp(prefix="dpe-pg-install-"))
        atexit.register(shutil.rmtree, root, True)
        root.chmod(0o755)
        shutil.copytree(install, root / package.name / install.name, symlinks=True)
        libs = package.parent / f"{package.name}.libs"
        if libs.is_dir():
            shutil.copytree(libs, root / libs.name, symlinks=True)
        _PUBLIC[bins] = root / package.name / install.name / bins.name
    return _PUBLIC[bins]


class Postgres:
    """One throw-away server: `start()`, `stop()` (and start again: a restart), `url` (with no
    password in it). With a `password`, the server asks every client for it (SCRAM); without,
    it trusts every local connection."""

    def __init__(self, bins: Path, password: str | None = None) -> None:
        self.user = "nobody" if os.geteuid() == 0 else None
        self.bins = _runnable_by(self.user, bins) if self.user else bins
        self.dir = Path(tempfile.mkdtemp(prefix="dpe-pg-"))
        self.data = self.dir / "data"
        self.port = _free_port()
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        if self.user:
            shutil.chown(self.dir, self.user)
        auth = ["-A", "trust"]
        if password is not None:
            secret = self.dir / "password"
            secret.write_text(password + "\n")
            if self.user:
                shutil.chown(secret, self.user)
            auth = ["-A", "scram-sha-256", f"--pwfile={secret}"]
        self._run("initdb", "-D", str(self.data), "-U", "postgres", *auth, "-E", "UTF8")

    def _run(self, tool: str, *args: str) -> None:
        subprocess.run(
            [str(self.bins / tool), *args],
            check=True,
            capture_output=True,
            user=self.user,
            cwd=self.dir,
        )

    def start(self) -> None:
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.dir} -c fsync=off"
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-w", "-l", "log", "start")

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def is_running(self) -> bool:
        try:
            self._run("pg_ctl", "-D", str(self.data), "status")
        except subprocess.CalledProcessError:  # 3: no server running
            return False
        return True

    def destroy(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError):  # already stopped
            self.stop("immediate")
        shutil.rmtree(self.dir, ignore_errors=True)


@contextlib.contextmanager
def running(password: str | None = None) -> Iterator[Postgres]:
    """A throw-away server, started, and destroyed at the end (`available()` must be "")."""
    bins = bin_dir()
    assert bins is not None
    server = Postgres(bins, password)
    try:
        server.start()
        yield server
    finally:
        server.destroy()


def available() -> str:
    """Why a server cannot be started here ("": it can)."""
    if importlib.util.find_spec("psycopg") is None:
        return "psycopg is not installed (pip install 'dpe-server[postgres]')"
    if bin_dir() is None:
        return "no PostgreSQL server: pip install pgserver, or install the distribution's"
    return ""


def fresh_database(admin_url: str, name: str) -> str:
    """The URL of a new, empty database `name` (dropped first if there) on `admin_url`'s server."""
    import psycopg

    name = re.sub(r"[^a-z0-9_]", "_", name.lower())[:60]
    with psycopg.connect(admin_url, autocommit=True) as db:
        db.execute(f"DROP DATABASE IF EXISTS {name}")
        db.execute(f"CREATE DATABASE {name}")
    return admin_url.rsplit("/", 1)[0] + "/" + name
