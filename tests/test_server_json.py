"""server.json, the MCP registry's entry for dpe-server, is valid against the registry's
published schema (vendored in scripts/registry/, with its URL and date) and says what the
package and its command are: the PyPI package and version of pyproject.toml, the `serve`
options that exist, the environment variable the command reads, the name the README claims."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from dpe_server import PASSWORDS_ENV, __version__
from dpe_server.cli.command import _parser

ROOT = Path(__file__).resolve().parents[1]
SCHEMA_URL = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"


@pytest.fixture(scope="module")
def entry() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((ROOT / "server.json").read_text("utf-8"))
    return loaded


def test_server_json_is_valid_against_the_registry_schema(entry: dict[str, Any]) -> None:
    schema = json.loads((ROOT / "scripts" / "registry" / "server.schema.json").read_text("utf-8"))
    assert schema["$id"] == SCHEMA_URL == entry["$schema"]
    validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker())
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(entry)]
    assert errors == []
    assert list(validator.iter_errors({**entry, "description": "x" * 101}))  # it does check


def test_server_json_describes_the_package_and_its_command(entry: dict[str, Any]) -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    assert entry["version"] == __version__ == project["version"]
    (package,) = entry["packages"]
    assert (package["registryType"], package["identifier"]) == ("pypi", project["name"])
    assert package["version"] == __version__
    assert package["transport"] == {"type": "stdio"}
    serve = _parser(with_check=False)._subparsers._group_actions[0].choices["serve"]
    options = {o: a for a in serve._actions for o in a.option_strings}
    args = package["packageArguments"]
    assert args[0] == {**args[0], "type": "positional", "value": "serve"}
    assert args[1]["isRequired"] is True
    for arg in args[2:]:
        action = options[arg["name"]]  # an option serve has
        parse = action.type or str
        assert parse(arg["default"]) == action.default, arg["name"]
        assert arg.get("choices", list(action.choices or [])) == list(action.choices or [])
    assert [v["name"] for v in package["environmentVariables"]] == [PASSWORDS_ENV]
    readme = (ROOT / "README.md").read_text("utf-8")
    assert re.findall(r"mcp-name: (\S+)", readme) == [entry["name"]]
