"""The one place where domain errors become JSON-RPC errors (SPEC §3).

| case                  | dpe  | JSON-RPC code                                          |
|-----------------------|------|--------------------------------------------------------|
| URI fails validation  | 4204 | -32602                                                 |
| unknown host/doc_ref  | 4201 | not-found: -32002 (handshake era), -32602 (2026-07-28) |
| page out of range     | 4202 | not-found, data carries `page_count`                   |
| unknown element       | 4203 | not-found                                              |
"""

from __future__ import annotations

from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from dpe_server.model.errors import InvalidUri, RequestError

INVALID_PARAMS = -32602
RESOURCE_NOT_FOUND_LEGACY = -32002
"""The handshake era's resource-not-found code (mcp-resources seed)."""
RESOURCE_NOT_FOUND_MODERN = -32602
"""2026-07-28 (SEP-2164): not-found is invalid-params with `data.uri`."""
RATE_LIMITED = -32000


def not_found_code(protocol_version: str) -> int:
    if protocol_version in MODERN_PROTOCOL_VERSIONS:
        return RESOURCE_NOT_FOUND_MODERN
    return RESOURCE_NOT_FOUND_LEGACY


def to_mcp_error(error: RequestError, protocol_version: str) -> MCPError:
    """`error` as the JSON-RPC error a session of `protocol_version` expects."""
    code = INVALID_PARAMS if isinstance(error, InvalidUri) else not_found_code(protocol_version)
    return MCPError(code, error.message, data=error.data())
