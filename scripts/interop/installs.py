"""Install what the interop checks need into .cache/interop/, once, from the registries.

- `venv-mcp1/`: a virtualenv with the mcp 1.x SDK (PyPI).
- `node22/`: a Node >= 22 binary from the npm package `node-<os>-<arch>` (the machine's own
  node is used when it is new enough).
- `tools/`: the MCP Inspector, the conformance suite and the MCP Bundles CLI (npm), pinned.

Each install leaves a stamp naming what it installed; a later run with the same stamp reuses
it. A failure to install (no network, no registry, no npm) raises `Skip` with the reason.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import sys
import venv
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("DPE_INTEROP_CACHE") or ROOT / ".cache" / "interop")
"""Where everything is installed; DPE_INTEROP_CACHE moves it (e.g. to try a first run)."""
MCP1_SPEC = "mcp>=1.20,<2"
NODE_MAJOR = 22
NODE_PACKAGE_SPEC = f"@{NODE_MAJOR}"
INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"
CONFORMANCE = "@modelcontextprotocol/conformance@0.1.16"
MCPB = "@anthropic-ai/mcpb@2.1.2"
INSTALL_TIMEOUT = 600
NPM_INSTALL = ("install", "--no-audit", "--no-fund", "--fetch-retries=1", "--prefix")


class Skip(Exception):
    """A part cannot run on this machine (nothing to install it from); not a failure."""


@dataclass(frozen=True)
class Node:
    """A Node >= 22 and the environment that runs npm package binaries with it."""

    binary: Path
    version: str
    env: dict[str, str]

    def bin(self, name: str) -> Path:
        return CACHE / "tools" / "node_modules" / ".bin" / name


def _run(args: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> str:
    """Run an install step; its output is returned, or `Skip` raised with the tail of it."""
    try:
        done = subprocess.run(
            args,
            env=env,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Skip(f"{Path(args[0]).name} could not run: {exc}") from None
    if done.returncode != 0:
        tail = " | ".join((done.stdout + done.stderr).strip().splitlines()[-3:])
        raise Skip(f"`{' '.join(args[:4])} ...` failed (exit {done.returncode}): {tail}")
    return done.stdout


def _stamped(folder: Path, stamp: str) -> bool:
    return (folder / ".dpe-interop-stamp").is_file() and (
        folder / ".dpe-interop-stamp"
    ).read_text() == stamp


def _stamp(folder: Path, stamp: str) -> None:
    (folder / ".dpe-interop-stamp").write_text(stamp)


def mcp1_python() -> Path:
    """The python of a virtualenv holding the mcp 1.x SDK."""
    folder = CACHE / "venv-mcp1"
    py = folder / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    stamp = f"{sys.version_info[:2]} {MCP1_SPEC}"
    if py.exists() and _stamped(folder, stamp):
        return py
    print(f"interop: installing {MCP1_SPEC} into {folder.relative_to(ROOT)}", flush=True)
    shutil.rmtree(folder, ignore_errors=True)
    try:
        venv.EnvBuilder(with_pip=True).create(folder)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise Skip(f"could not create a virtualenv: {exc}") from None
    _run([str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", MCP1_SPEC])
    _stamp(folder, stamp)
    return py


def _major(version: str) -> int:
    match = re.match(r"v?(\d+)\.", version.strip())
    return int(match.group(1)) if match else 0


def _node_package() -> str:
    system = {"Linux": "linux", "Darwin": "darwin"}.get(platform.system())
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(
        platform.machine().lower()
    )
    if system is None or arch is None:
        raise Skip(f"no npm package of Node for {platform.system()} {platform.machine()}")
    return f"node-{system}-{arch}"


def node() -> Node:
    """A Node >= 22: the machine's own, or one installed from the npm registry."""
    system_node = shutil.which("node")
    if system_node:
        version = _run([system_node, "--version"]).strip()
        if _major(version) >= NODE_MAJOR:
            return Node(Path(system_node), version, dict(os.environ))
    package = _node_package()
    folder = CACHE / "node22"
    binary = folder / "node_modules" / package / "bin" / "node"
    stamp = f"{package}{NODE_PACKAGE_SPEC}"
    if not (binary.exists() and _stamped(folder, stamp)):
        npm = shutil.which("npm")
        if npm is None:
            raise Skip(f"Node >= {NODE_MAJOR} is needed and there is no npm to install it with")
        print(f"interop: installing {package}{NODE_PACKAGE_SPEC} from npm", flush=True)
        folder.mkdir(parents=True, exist_ok=True)
        _run([npm, *NPM_INSTALL, str(folder), f"{package}{NODE_PACKAGE_SPEC}"])
        _stamp(folder, stamp)
    version = _run([str(binary), "--version"]).strip()
    if _major(version) < NODE_MAJOR:
        raise Skip(f"the npm registry gave Node {version}, not >= {NODE_MAJOR}")
    env = {**os.environ, "PATH": f"{binary.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    return Node(binary, version, env)


def node_tools(runtime: Node) -> None:
    """The Inspector, the conformance suite and the MCP Bundles CLI, installed under
    .cache/interop/tools."""
    folder = CACHE / "tools"
    stamp = f"{INSPECTOR} {CONFORMANCE} {MCPB}"
    if _stamped(folder, stamp) and runtime.bin("inspector").exists():
        return
    npm = shutil.which("npm", path=runtime.env["PATH"])
    if npm is None:
        raise Skip("there is no npm to install the Inspector, conformance suite and mcpb with")
    print(f"interop: installing {INSPECTOR}, {CONFORMANCE} and {MCPB} from npm", flush=True)
    folder.mkdir(parents=True, exist_ok=True)
    _run([npm, *NPM_INSTALL, str(folder), INSPECTOR, CONFORMANCE, MCPB], env=runtime.env)
    _stamp(folder, stamp)
