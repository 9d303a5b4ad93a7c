"""Churn of a container's children over MCP (issue 35, docs/children.md), with the SDK's
client: replacing an attachment of a message sends `updated` for the message (subscribed) and
the attachment, served as a document, reads its new content; an attachment added or removed
sends `list_changed`, and Level 0 then lists the message's children as they are."""

from __future__ import annotations

import json
import os
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from fixtures.builders.protected import plain_docx
from tests.e2e.harness import Inbox, connect, http_server, is_list_changed, is_updated, settled

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]


def _write(path: Path, attachments: dict[str, list[str]]) -> None:
    """The message with `attachments` (name: paragraphs of a docx), replaced at once."""
    msg = EmailMessage()
    msg["Subject"] = "churn over mcp"
    msg.set_content("body")
    for name, texts in attachments.items():
        msg.add_attachment(plain_docx(texts), "application", "octet-stream", filename=name)
    scratch = path.with_name("scratch.tmp")  # ignored by the server (*.tmp)
    scratch.write_bytes(bytes(msg))
    os.replace(scratch, path)


async def _level0(client: Client, host: str) -> list[dict[str, Any]]:
    res = await client.read_resource(f"dpe://{host}")
    item = res.contents[0]
    assert isinstance(item, types.TextResourceContents)
    documents: list[dict[str, Any]] = json.loads(item.text)["documents"]
    return documents


def _children(documents: list[dict[str, Any]]) -> dict[str, str]:
    """The message's children listed: path inside it -> uri."""
    return {d["path"]: d["uri"] for d in documents if d.get("path")}


async def _page_text(client: Client, uri: str) -> str:
    res = await client.read_resource(f"{uri}/pages/0")
    item = res.contents[0]
    assert isinstance(item, types.TextResourceContents)
    return item.text


async def _children_become(
    client: Client, inbox: Inbox, host: str, wanted: set[str]
) -> dict[str, str]:
    """Wait, on `list_changed` notifications, until Level 0 lists exactly `wanted` children
    (a notice may be an earlier change's: the list is read again on each)."""
    with anyio.fail_after(30):
        while True:
            found = _children(await _level0(client, host))
            if set(found) == wanted:
                return found
            await inbox.wait_for(is_list_changed, timeout=30)


async def test_an_attachment_replaced_added_or_removed_is_announced(tmp_path: Path) -> None:
    folder = tmp_path / "mail"
    folder.mkdir()
    eml = folder / "m.eml"
    _write(eml, {"a.docx": ["CHURN-ONE"], "b.docx": ["CHURN-B"]})
    os.utime(eml, ns=(1, 1_000_000_000))
    inbox = Inbox()
    with http_server(folder, "--workers", "1") as server:
        async with connect("http", "legacy", folder, url=server.url, inbox=inbox) as client:
            host = (await client.list_resources()).resources[0].uri.split("/")[2]
            await settled(client, host)
            documents = await _level0(client, host)
            (container,) = [d["uri"] for d in documents if not d.get("path")]
            kids = await _children_become(
                client, inbox, host, {"attachments/a.docx", "attachments/b.docx"}
            )
            assert "CHURN-ONE" in await _page_text(client, kids["attachments/a.docx"])
            await client.subscribe_resource(container)

            # a's content replaced: the message is updated; a, at the same URI, reads anew.
            _write(eml, {"a.docx": ["CHURN-TWO"], "b.docx": ["CHURN-B"]})
            await inbox.wait_for(is_updated(container), timeout=30)
            assert "CHURN-TWO" in await _page_text(client, kids["attachments/a.docx"])

            # c comes: the list changed.
            _write(eml, {"a.docx": ["CHURN-TWO"], "b.docx": ["CHURN-B"], "c.docx": ["CHURN-C"]})
            await inbox.wait_for(is_updated(container), timeout=30)
            now = await _children_become(
                client,
                inbox,
                host,
                {"attachments/a.docx", "attachments/b.docx", "attachments/c.docx"},
            )
            assert "CHURN-C" in await _page_text(client, now["attachments/c.docx"])

            # b goes: the list changed again, b's URI no longer served.
            _write(eml, {"a.docx": ["CHURN-TWO"], "c.docx": ["CHURN-C"]})
            await inbox.wait_for(is_updated(container), timeout=30)
            await _children_become(
                client, inbox, host, {"attachments/a.docx", "attachments/c.docx"}
            )
            assert kids["attachments/b.docx"] not in {d["uri"] for d in await _level0(client, host)}
