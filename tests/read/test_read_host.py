"""`dpe-server read` of a URI naming another host answers at once, before it parses anything:
Level 0 parses the whole folder (26 s on 30 files) and said `Unknown host` only after."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpe_server.extractors import DEFAULT_LIMITS, Limits
from dpe_server.isolation.backends import ThreadBackend
from tests.e2e.harness import make_folder


def test_a_mistyped_host_is_refused_before_the_folder_is_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from dpe_server.cli import command as cli
    from dpe_server.isolation import workers

    started: list[object] = []

    class Recording(ThreadBackend):
        def __init__(self, settings: object = None, limits: Limits = DEFAULT_LIMITS) -> None:
            super().__init__(limits=limits)
            started.append(settings)

    monkeypatch.setattr(workers, "ProcessBackend", Recording)
    folder = make_folder(tmp_path / "docs")
    for uri in ("dpe://local.dpe.dcos", "dpe://local.dpe.dcos/report-0a1b2c/pages/0"):
        assert cli.main(["read", str(folder), uri, "--no-cache"]) == 2
        out = capsys.readouterr()
        assert out.out == ""
        assert out.err == (
            "Unknown host 'local.dpe.dcos': this server is dpe://local.dpe.docs. (dpe 4201)\n"
        )
    assert started == []  # no worker pool: nothing was parsed
    assert cli.main(["read", str(folder), "dpe://LOCAL.dpe.docs?format=text", "--no-cache"]) == 0
    assert capsys.readouterr().out.startswith("Documents (4)")
    assert len(started) == 1
