"""`dpe-server` with one extra, trivial in-memory resource, for the latency bench only.

    python bench/serve_trivial.py serve DIR [options]     (the same options as dpe-server)

`resources/read` of `bench://trivial` returns a constant short text without touching the
catalog; every other request is the real server's. Reads of it measure what the transport,
the SDK and the server's dispatch cost, which is the floor for any `resources/read`.
"""

from __future__ import annotations

import sys
from typing import Any

import mcp_types as types

from dpe_server.cli import command as cli
from dpe_server.surface.app import DpeApp

TRIVIAL_URI = "bench://trivial"
_real_read_resource = DpeApp.read_resource


async def _read_resource(
    self: DpeApp, ctx: Any, params: types.ReadResourceRequestParams
) -> types.ReadResourceResult:
    if str(params.uri) == TRIVIAL_URI:
        return types.ReadResourceResult(
            contents=[
                types.TextResourceContents(uri=TRIVIAL_URI, mime_type="text/plain", text="ok")
            ]
        )
    return await _real_read_resource(self, ctx, params)


DpeApp.read_resource = _read_resource  # type: ignore[method-assign]

if __name__ == "__main__":
    sys.exit(cli.main())
