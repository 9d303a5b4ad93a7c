"""One connection as the checker uses it: reads and completions that never raise, recording
what went wrong in the report instead (a checker must survive a broken server)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from dpe_server.check import spec
from dpe_server.check.report import RULES, Report
from dpe_server.check.rules_surface import read_format, read_json

RULES["read.ok"] = "every valid URI the server itself gives out reads without an error"
RULES["protocol"] = "requests get a well-formed answer in time"

MAX_PROTOCOL_FAILURES = 5


class Aborted(Exception):
    """Too many requests failed at the protocol level: the era's walk stops."""


@dataclass
class Read:
    uri: str
    contents: Sequence[Any] = ()
    error: types.ErrorData | None = None
    body: Any = None
    """The parsed JSON of a format=json read, else None."""

    @property
    def text(self) -> str:
        first = self.contents[0] if self.contents else None
        return first.text if isinstance(first, types.TextResourceContents) else ""


class Session:
    def __init__(self, client: Client, report: Report) -> None:
        self.client = client
        self.report = report
        self.protocol_failures = 0

    @property
    def modern(self) -> bool:
        return self.client.protocol_version in MODERN_PROTOCOL_VERSIONS

    @property
    def not_found_code(self) -> int:
        return spec.NOT_FOUND_MODERN if self.modern else spec.NOT_FOUND_HANDSHAKE

    def protocol_failure(self, what: str, exc: BaseException) -> None:
        self.report.fail("protocol", what, "a well-formed answer", f"{type(exc).__name__}: {exc}")
        self.protocol_failures += 1
        if self.protocol_failures >= MAX_PROTOCOL_FAILURES:
            raise Aborted(f"{self.protocol_failures} requests failed; the walk stopped")

    async def read(self, uri: str) -> Read:
        """resources/read of `uri`: its contents, or the JSON-RPC error it got."""
        try:
            result = await self.client.read_resource(uri)
        except MCPError as exc:
            return Read(uri, error=exc.error)
        except Exception as exc:  # a broken answer is a finding, not a crash
            self.protocol_failure(uri, exc)
            return Read(uri, error=types.ErrorData(code=0, message=f"no answer: {exc}"))
        return Read(uri, contents=list(result.contents))

    async def read_ok(self, uri: str) -> Read | None:
        """A read that must succeed; None (and a failure recorded) when it does not."""
        got = await self.read(uri)
        if got.error is not None:
            self.report.fail(
                "read.ok", uri, "a successful read", f"error {got.error.code}: {got.error.message}"
            )
            return None
        return got

    async def json(self, uri: str) -> Any:
        """The JSON payload of `uri` (format=json), checked for mime type and syntax."""
        got = await self.read_ok(uri)
        if got is None:
            return None
        if not self.report.check(read_json, uri, got.contents, uri):
            return None
        return json.loads(got.text)

    async def formats(self, uri: str) -> dict[str, str]:
        """The markdown and text bodies of `uri`, each checked for mime type and body."""
        out: dict[str, str] = {}
        for fmt in ("markdown", "text"):
            variant = f"{uri}{'&' if '?' in uri else '?'}format={fmt}"
            got = await self.read_ok(variant)
            if got is not None and self.report.check(read_format, variant, got.contents, fmt):
                out[fmt] = got.text
        return out

    async def complete(
        self, template: str, name: str, value: str, context: dict[str, str] | None = None
    ) -> tuple[types.Completion | None, str | None]:
        ref = types.ResourceTemplateReference(type="ref/resource", uri=template)
        try:
            result = await self.client.complete(ref, {"name": name, "value": value}, context)
        except MCPError as exc:
            return None, f"{exc.error.code}: {exc.error.message}"
        except Exception as exc:  # a broken answer is a finding, not a crash
            self.protocol_failure(f"completion/complete {name}", exc)
            return None, f"no answer: {exc}"
        return result.completion, None
