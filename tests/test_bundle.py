"""The MCP Bundle (`python3 dev.py bundle`, scripts/bundle.py): its manifest says what the
MCPB 0.3 spec asks, and the bundle unpacked serves the fixtures through its own `mcp_config`,
substituted as Claude Desktop does, with a Python that has nothing installed (so everything
the server imports must be carried in `server/lib`), over stdio with the SDK's Client."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import venv
import zipfile
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from dpe_server import __version__
from fixtures.goldens import EXPECTED, Normaliser, golden_dir, prepare
from tests.e2e.harness import host_of, settled

ROOT = Path(__file__).resolve().parents[1]
PROTECTED = {"protected-secret.docx", "pdf_encrypted.pdf"}
"""The fixtures protected on purpose: opened here, through the bundle's passwords file."""
_VARIABLE = re.compile(r"\$\{([^}]+)\}")


@pytest.fixture(scope="module")
def unpacked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bundle")
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "bundle.py"), "--out", str(out / "dist")],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    bundle = out / "dist" / f"dpe-server-{__version__}.mcpb"
    assert done.stdout.startswith(f"wrote {bundle} (")
    with zipfile.ZipFile(bundle) as z:
        z.extractall(out / "unpacked")
    return out / "unpacked"


@pytest.fixture(scope="module")
def manifest(unpacked: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((unpacked / "manifest.json").read_text("utf-8"))
    return loaded


def test_the_manifest_says_what_the_server_is_and_asks_for_its_settings(
    manifest: dict[str, Any], unpacked: Path
) -> None:
    assert manifest["manifest_version"] == "0.3"
    assert (manifest["name"], manifest["version"]) == ("dpe-server", __version__)
    assert manifest["license"] == "MIT"
    assert (unpacked / manifest["icon"]).read_bytes().startswith(b"\x89PNG")
    assert [t["name"] for t in manifest["tools"]] == ["read", "search"]
    assert manifest["prompts"] == []
    server = manifest["server"]
    assert (server["type"], server["entry_point"]) == ("python", "server/main.py")
    assert (unpacked / server["entry_point"]).is_file()
    assert (unpacked / "server" / "lib" / "dpe_server" / "__init__.py").is_file()
    assert not list(unpacked.rglob("*.pyc"))
    config = manifest["user_config"]
    assert {k: v["type"] for k, v in config.items()} == {
        "documents": "directory",
        "passwords": "file",
        "ocr": "boolean",
        "workers": "number",
    }
    assert config["documents"]["required"] is True
    assert (config["passwords"]["required"], config["passwords"]["sensitive"]) == (False, True)
    used = set(_VARIABLE.findall(json.dumps(server["mcp_config"])))
    assert used == {"__dirname", *(f"user_config.{k}" for k in config)}  # each one passed
    compatibility = manifest["compatibility"]
    assert compatibility["platforms"] == [sys.platform]
    major, minor = sys.version_info[:2]
    assert compatibility["runtimes"]["python"] == f">={major}.{minor},<{major}.{minor + 1}"


def _substituted(value: Any, variables: dict[str, str]) -> Any:
    """`${…}` replaced as the host does (a whole-string variable by its value)."""
    if isinstance(value, list):
        return [_substituted(v, variables) for v in value]
    if isinstance(value, dict):
        return {k: _substituted(v, variables) for k, v in value.items()}
    return _VARIABLE.sub(lambda m: variables[m.group(1)], value)


@pytest.fixture
def bare_python(tmp_path: Path) -> Path:
    """This Python (the version the bundle was built for) with nothing installed: a user's
    `python3`, as far as the bundle can tell (this machine's own has many packages)."""
    folder = tmp_path / "bare"
    venv.EnvBuilder(with_pip=False, symlinks=os.name != "nt").create(folder)
    return folder / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


@pytest.mark.anyio
async def test_the_unpacked_bundle_serves_the_fixtures_through_its_mcp_config(
    manifest: dict[str, Any], unpacked: Path, bare_python: Path, tmp_path: Path
) -> None:
    folder = prepare(tmp_path / "work")  # `fixtures`, every mtime fixed: the goldens' host
    variables = {
        "__dirname": str(unpacked),
        "user_config.documents": str(folder),
        "user_config.passwords": str(ROOT / "fixtures" / "passwords.toml"),
        "user_config.ocr": "false",
        "user_config.workers": "2",
    }
    config = _substituted(manifest["server"]["mcp_config"], variables)
    assert config["command"] == ("python" if sys.platform == "win32" else "python3")
    bare = {k: os.environ[k] for k in ("PATH", "SYSTEMROOT") if k in os.environ}
    env = {**bare, "XDG_CACHE_HOME": str(tmp_path / "cache"), **config["env"]}
    params = StdioServerParameters(command=str(bare_python), args=config["args"], env=env)
    norm = Normaliser(folder)
    with anyio.fail_after(240):
        async with Client(params, mode="legacy", read_timeout_seconds=120) as client:
            # Attachments and archive members are listed once their container is read.
            await settled(client, await host_of(client), timeout=200)
            listed = await client.list_resources()
            refs = {}
            cursor = listed.next_cursor
            resources = list(listed.resources)
            while cursor:
                listed = await client.list_resources(cursor=cursor)
                resources += listed.resources
                cursor = listed.next_cursor
            for r in resources:
                meta = r.meta or {}
                rel = unquote(str(meta["file_uri"])).split("/fixtures/", 1)[1]
                # a child's file_uri names its path inside the container after `#` (`!/` deeper)
                refs[rel.replace("#", "\0").replace("!/", "\0")] = r.uri
            catalog = json.loads((EXPECTED / "catalog.json").read_text("utf-8"))
            assert len(refs) == catalog["total_count"]
            compared = 0
            for rel, uri in sorted(refs.items()):
                result = await client.read_resource(f"{uri}?depth=pages&limit=100")
                item = result.contents[0]
                assert isinstance(item, types.TextResourceContents)
                if Path(rel).name in PROTECTED:  # opened with the passwords file's password
                    body = json.loads(item.text)
                    assert "error" not in body, body
                    assert body["page_count"] > 0
                    continue
                golden = EXPECTED / golden_dir(rel) / "pages.json"
                assert norm(item.text) == golden.read_text("utf-8"), rel
                compared += 1
            assert compared == len(refs) - len(PROTECTED)
            tools = await client.list_tools()
            assert [t.name for t in tools.tools] == [t["name"] for t in manifest["tools"]]
