"""A file added to the folder is announced once, with its title: one `list_changed`, after
which resources/list shows it read (its extracted title, not `indexing`). It was announced
twice: once probed (listed, `indexing`), once extracted (titled), each announcement making
every client list the folder again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from tests.e2e.harness import (
    Inbox,
    connect,
    host_of,
    is_list_changed,
    make_folder,
    settled,
    write_deck,
)

pytestmark = pytest.mark.anyio


async def _listing(client: Client, host: str) -> dict[str, dict[str, Any]]:
    """Level 0's documents by their path in the folder."""
    res = await client.read_resource(f"dpe://{host}?limit=100")
    item = res.contents[0]
    assert isinstance(item, types.TextResourceContents)
    documents = json.loads(item.text)["documents"]
    return {str(d["file_uri"]).rsplit("/docs/", 1)[1]: d for d in documents}


async def test_a_new_file_is_one_list_changed_with_its_title(tmp_path: Path) -> None:
    folder = make_folder(tmp_path / "docs")
    inbox = Inbox()
    async with connect("stdio", "legacy", folder, inbox=inbox) as client:
        host = await host_of(client)
        await settled(client, host)
        inbox.items.clear()
        before = len(await _listing(client, host))  # the new file in, notes.docx out

        write_deck(folder / "new.pptx", ["Harbor plan", "Budget"])
        # the first announcement after which the list shows the new file (the warm-up's own
        # may come after `settled` saw the folder read, and is passed over) shows it read
        listed: dict[str, dict[str, Any]] = {}
        while "new.pptx" not in listed:
            await inbox.wait_for(is_list_changed, timeout=60)
            listed = await _listing(client, host)
        new = listed["new.pptx"]
        assert not new.get("indexing"), new
        assert (new["title"], new["page_count"]) == ("Harbor plan", 2)

        # then another change, a file removed: its announcement is the next one, so none
        # came between (the count of list_changed for the new file is one; notifications
        # arrive in the order they were sent, and a second one for the new file was due as
        # soon as the list showed it read, before the removal was even seen)
        (folder / "notes.docx").unlink()
        await inbox.wait_for(is_list_changed, timeout=60)
        listed = await _listing(client, host)
        assert "notes.docx" not in listed, "a second list_changed came for the new file"
        assert len(listed) == before
        assert [n.method for n in inbox.items] == []
