"""The command an `encrypted` document's error names is one the `dpe-server` command accepts
(it said `dpe-server --passwords FILE`, which is no command)."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from dpe_server.cli.command import _parser

ROOT = Path(__file__).resolve().parents[1]
_COMMAND = re.compile(r"dpe-server [^,;]*")


def test_the_command_an_encrypted_error_names_parses(tmp_path: Path) -> None:
    catalog = json.loads((ROOT / "fixtures" / "expected" / "catalog.json").read_text("utf-8"))
    messages = [
        d["error"]["message"]
        for d in catalog["documents"]
        if d.get("error", {}).get("kind") == "encrypted"
    ]
    assert len(messages) == 2  # the pdf and the docx protected on purpose
    passwords = tmp_path / "passwords.toml"
    passwords.write_text('default = ["x"]\n', encoding="utf-8")
    for message in messages:
        named = _COMMAND.findall(message)
        assert len(named) == 1, message
        words = shlex.split(named[0].replace("FOLDER", str(tmp_path)))
        words = [str(passwords) if w == "FILE" else w for w in words]
        args = _parser(with_check=False).parse_args(words[1:])  # exits 2 on a bad command
        assert (args.command, args.dir, args.passwords) == ("serve", tmp_path, str(passwords))
