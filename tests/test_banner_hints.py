"""What `serve` says of a folder it finds nothing to serve in: which file types it reads (it
said only `serving 0 documents`, leaving the user to guess why)."""

from __future__ import annotations

import io
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, cast

from dpe_server.extractors import FORMATS

if TYPE_CHECKING:
    from dpe_server.surface.app import DpeApp


def _shown(entries: list[object]) -> str:
    from dpe_server.cli.banner import Banner

    catalog = SimpleNamespace(root=Path("/docs"), entries=lambda: entries)
    out = io.StringIO()
    banner = Banner(cast("DpeApp", SimpleNamespace(host="h", catalog=catalog)), out)
    banner.listening("stdio")
    banner.indexed()
    return out.getvalue()


def test_a_folder_with_no_supported_file_is_told_the_types_read() -> None:
    lines = _shown([]).splitlines()
    assert lines[0] == "dpe-server: serving 0 documents from /docs as dpe://h on stdio"
    assert lines[1].startswith("dpe-server: no document to serve: /docs holds no file of a type")
    assert all(suffix in lines[1] for suffix in (".pdf", ".docx", ".xlsx", ".pptx", ".csv"))
    assert len(FORMATS) > 10
    assert all(suffix in lines[1] for suffix in FORMATS)
    assert "files added later are served as they appear" in lines[1]
    assert len(lines) == 2  # not a terminal: no third line


def test_a_folder_with_documents_gets_no_such_hint() -> None:
    assert "no document" not in _shown([SimpleNamespace(error=None)])
