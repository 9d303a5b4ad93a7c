"""Files under legacy names that link to a web server (issue 31): LibreOffice opens what its
own detection finds and loads what a document links, so only true legacy bytes reach it, and
it runs with no network and a profile that follows no link. Served and read, nothing reaches
the listener."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from fixtures.builders import legacy, remote_links
from tests.e2e.harness import Listener, age, connect, host_of, http_server, listening, settled


@pytest.fixture
def listener() -> Iterator[Listener]:
    with listening() as found:
        yield found


async def _json(client: Client, uri: str) -> Any:
    res = await client.read_resource(uri)
    item = res.contents[0]
    assert isinstance(item, types.TextResourceContents)
    return json.loads(item.text)


@pytest.mark.skipif(shutil.which("soffice") is None, reason="LibreOffice (soffice) is not on PATH")
def test_linked_resources_never_fetched(tmp_path: Path, listener: Listener) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, data in remote_links.documents(listener.base).items():
        (folder / name).write_bytes(data)
    # A true Word 97 .doc holding a linked picture and a linked section, saved by LibreOffice
    # (which fetches them as it saves: those requests are the builder's, cleared below).
    source = tmp_path / "true-doc.fodt"
    source.write_bytes(remote_links.fodt(listener.base + "/true-doc"))
    made = legacy.converted(source, "doc", folder)
    assert made is not None
    assert any(path.startswith("/true-doc/") for path, _ in listener.requests)
    listener.requests.clear()
    age(folder)

    async def read_everything() -> dict[str, Any]:
        with http_server(folder) as server:
            async with connect("http", "legacy", folder, server.url) as client:
                host = await host_of(client)
                await settled(client, host, timeout=120)
                level0 = await _json(client, f"dpe://{host}")
                by_name = {d["file_uri"].rsplit("/", 1)[1]: d for d in level0["documents"]}
                for doc in level0["documents"]:
                    if "error" not in doc:
                        await _json(client, doc["uri"] + "?depth=pages")
                        await _json(client, doc["uri"] + "/pages/0")
                return by_name

    listed = anyio.run(read_everything)
    assert listener.requests == []
    assert len(listed) == 13
    assert "error" not in listed["true-doc.doc"], listed["true-doc.doc"]
    for name in remote_links.documents(listener.base):
        error = listed[name]["error"]
        if name.endswith(".xls"):  # read by calamine, which fetches nothing
            assert error["kind"] == "corrupt"
        else:
            assert error["kind"] == "unsupported", (name, error)
            assert "LibreOffice is given only real" in error["message"]
