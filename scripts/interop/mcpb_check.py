"""The MCP Bundle checked by the official MCP Bundles CLI (`@anthropic-ai/mcpb`): the bundle is
built (scripts/bundle.py, into a temporary folder), its manifest validated against the CLI's
schema (`mcpb validate`, with the icon beside it) and the bundle read whole (`mcpb info`)."""

from __future__ import annotations

import subprocess
import tempfile
import zipfile
from pathlib import Path

from installs import ROOT, Node
from servers import server_python

TIMEOUT = 600


def _run(args: list[str], env: dict[str, str] | None = None) -> tuple[int, str]:
    done = subprocess.run(
        args, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False
    )
    return done.returncode, (done.stdout + done.stderr).strip()


def run(runtime: Node) -> tuple[str, str]:
    mcpb = str(runtime.bin("mcpb"))
    with tempfile.TemporaryDirectory(prefix="dpe-mcpb-") as tmp:
        out = Path(tmp)
        code, said = _run([str(server_python()), str(ROOT / "scripts" / "bundle.py"), "--out", tmp])
        if code:
            return "FAIL", f"scripts/bundle.py exit {code}: {said[-300:]}"
        bundle = next(out.glob("*.mcpb"))
        with zipfile.ZipFile(bundle) as z:
            z.extractall(out / "unpacked", members=["manifest.json", "icon.png"])
        code, said = _run([mcpb, "validate", str(out / "unpacked" / "manifest.json")], runtime.env)
        print(said, flush=True)
        if code or "validation passes" not in said:
            return "FAIL", f"mcpb validate exit {code}: {said[-300:]}"
        code, said = _run([mcpb, "info", str(bundle)], runtime.env)
        print(said, flush=True)
        if code or bundle.name not in said:
            return "FAIL", f"mcpb info exit {code}: {said[-300:]}"
        size = bundle.stat().st_size / 1e6
    return "PASS", f"{bundle.name} ({size:.1f} MB): mcpb validate and mcpb info ok"
