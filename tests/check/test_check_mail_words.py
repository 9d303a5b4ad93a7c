"""`dpe-server check --words` (`L2.words`) holds each e-mail message to its own words: its
From, To, Cc and Subject fields and the body a mail client shows, as `check/mailtext.py`
reads them; a server dropping one of them fails naming the rule."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from dpe_server.check import InProcessTarget, Limits, render_text, run_check
from dpe_server.model.uri import parse
from fixtures.builders import mail
from tests.check.test_check import _broken_server

pytestmark = pytest.mark.anyio

Reader = Callable[[str], Coroutine[Any, Any, types.ReadResourceResult]]


def _as_is(read: Reader) -> Reader:
    return read


def dropping(word: str) -> Callable[[Reader], Reader]:
    """A server whose Level 2 reads lose `word` wherever it is written."""

    def breaker(read: Reader) -> Reader:
        async def broken(uri: str) -> types.ReadResourceResult:
            result = await read(uri)
            item = result.contents[0]
            if parse(uri).level == 2 and isinstance(item, types.TextResourceContents):
                item = item.model_copy(update={"text": re.sub(f"(?i){word}", "", item.text)})
            return types.ReadResourceResult(contents=[item])

        return broken

    return breaker


drop_the_cc = dropping("carol")


async def test_check_words_holds_each_message_to_its_words(
    fixture_dir: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    shutil.copyfile(fixture_dir / mail.EML, folder / mail.EML)
    limits = Limits(max_docs=1, max_pages=2, max_elements=1, words=True)
    cases: list[tuple[Callable[[Reader], Reader], bool]] = [(_as_is, False), (drop_the_cc, True)]
    for breaker, failed in cases:
        target = InProcessTarget(lambda b=breaker: _broken_server(folder, b))
        report = await run_check(target, ("legacy",), limits)
        text = render_text(report, verbose=True)
        assert ("L2.words" in report.failed_rules()) is failed, text
        assert "L2.words" in text
        if failed:
            assert "carol" in text
