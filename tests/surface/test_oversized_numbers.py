"""Numbers of thousands of digits in a request, through the real MCP interface (issue 14).

Python's `int()` refuses text of more than 4,300 digits with its own `ValueError`: it reached
clients as JSON-RPC error 0 with Python's message, and the log as an ERROR traceback per
request. Each is now the error the SPEC names (an invalid URI is 4204 / -32602, a cursor the
server never gave out is invalid params) or, for completion, empty values.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from dpe_server.isolation.backends import ThreadBackend
from dpe_server.surface.app import Settings, build_server
from tests.e2e.harness import make_folder

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

HOST = "local.dpe.numbers"
BIG = "9" * 5000  # past Python's 4,300-digit limit of int()


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder for the module: no test changes it."""
    return make_folder(tmp_path_factory.mktemp("numbers") / "docs")


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The servers' cache, shared: the folder is extracted once, not once per test."""
    return tmp_path_factory.mktemp("numbers-cache")


@pytest.fixture
async def client(
    folder: Path, cache_dir: Path, request: pytest.FixtureRequest
) -> AsyncIterator[Client]:
    settings = Settings(
        root=folder, host=HOST, watch=False, cache_dir=cache_dir, backend=ThreadBackend()
    )
    server = build_server(settings)
    async with Client(server, mode=request.param, cache=None) as connected:
        yield connected


def _no_traceback_logged(caplog: pytest.LogCaptureFixture) -> None:
    logged = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert not logged, [r.getMessage() for r in logged]


@pytest.mark.parametrize("client", ["legacy", "auto"], indirect=True)
@pytest.mark.parametrize(
    ("tail", "reason"),
    [
        (f"/pages/{BIG}", "sub-path: pages/{N} is too large to be a page index"),
        (f"/elements/p{BIG}-txt1", "sub-path: the element id's numbers are too large"),
        (f"/elements/p0-txt{BIG}", "sub-path: the element id's numbers are too large"),
        (f"?depth=pages&offset={BIG}", "offset: offset is too large"),
        (f"?depth=pages&limit={BIG}", "limit: limit must be an integer from 1 to 100"),
    ],
    ids=["page", "element-page", "element-n", "offset", "limit"],
)
async def test_oversized_number_in_a_uri_is_an_invalid_uri(
    client: Client, tail: str, reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    doc = (await client.list_resources()).resources[0].uri
    with pytest.raises(MCPError) as info:
        await client.read_resource(doc + tail)
    error = info.value.error
    assert (error.code, error.data["dpe_code"]) == (-32602, 4204)
    assert str(error.data["reason"]).startswith(reason)
    assert len(error.message) < 160
    _no_traceback_logged(caplog)


@pytest.mark.parametrize("client", ["legacy"], indirect=True)
async def test_oversized_level0_offset_and_read_tool(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    with pytest.raises(MCPError) as info:
        await client.read_resource(f"dpe://{HOST}?offset={BIG}")
    assert (info.value.error.code, info.value.error.data["dpe_code"]) == (-32602, 4204)
    doc = (await client.list_resources()).resources[0].uri
    via_tool = await client.call_tool("read", {"uri": f"{doc}/pages/{BIG}"})
    assert via_tool.is_error
    text = via_tool.content[0]
    assert isinstance(text, types.TextContent)
    assert "too large to be a page index" in text.text
    assert "(dpe 4204)" in text.text
    _no_traceback_logged(caplog)


@pytest.mark.parametrize("client", ["legacy", "auto"], indirect=True)
@pytest.mark.parametrize("cursor", [BIG, "9" * 19, "²", "-1"], ids=["5000", "19", "sup", "neg"])
async def test_cursor_never_given_out_is_invalid_params(
    client: Client, cursor: str, caplog: pytest.LogCaptureFixture
) -> None:
    with pytest.raises(MCPError) as info:
        await client.list_resources(cursor=cursor)
    assert info.value.error.code == -32602
    assert info.value.error.message == "The cursor is not one this server gave out."
    _no_traceback_logged(caplog)


@pytest.mark.parametrize("client", ["legacy", "auto"], indirect=True)
async def test_completion_with_an_absurd_page_index_is_empty(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    listed = (await client.list_resources()).resources
    doc_ref = next(r for r in listed if r.meta and r.meta.get("page_count") == 3).uri.split("/")[3]
    pages = types.ResourceTemplateReference(
        type="ref/resource", uri=f"dpe://{HOST}/{{doc_ref}}/pages/{{page_index}}"
    )
    elements = types.ResourceTemplateReference(
        type="ref/resource", uri=f"dpe://{HOST}/{{doc_ref}}/elements/{{element_id}}"
    )
    for page_index in (BIG, "9" * 19, "²"):
        ids = await client.complete(
            elements,
            {"name": "element_id", "value": ""},
            {"doc_ref": doc_ref, "page_index": page_index},
        )
        assert ids.completion.values == []
    typed = await client.complete(pages, {"name": "page_index", "value": BIG}, {"doc_ref": doc_ref})
    assert typed.completion.values == []
    narrowed = await client.complete(
        elements, {"name": "element_id", "value": ""}, {"doc_ref": doc_ref, "page_index": "1"}
    )
    assert narrowed.completion.values
    assert all(v.startswith("p1-") for v in narrowed.completion.values)
    _no_traceback_logged(caplog)
