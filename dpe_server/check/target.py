"""What `dpe-server check` connects to: a command line (stdio), an HTTP(S) URL, or (in tests)
an in-process server. Each era gets a fresh connection: `legacy` forces the handshake era,
`auto` lets the SDK pick (2026-07-28 when the server speaks it)."""

from __future__ import annotations

import os
import shlex
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, TextIO

from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.lowlevel.server import Server
from mcp.shared._httpx_utils import create_mcp_http_client

Era = Literal["legacy", "auto"]
ERAS: tuple[Era, ...] = ("legacy", "auto")
READ_TIMEOUT = 60.0


@dataclass(frozen=True)
class StdioTarget:
    """A server started as `argv` and spoken to over its stdin/stdout."""

    argv: tuple[str, ...]
    errlog: TextIO | None = None
    """Where the server's stderr goes (default: this process's stderr)."""

    @property
    def label(self) -> str:
        return "stdio: " + shlex.join(self.argv)

    @asynccontextmanager
    async def connect(self, era: Era) -> AsyncIterator[Client]:
        params = StdioServerParameters(
            command=self.argv[0], args=list(self.argv[1:]), env=dict(os.environ)
        )
        transport = stdio_client(params, self.errlog) if self.errlog else stdio_client(params)
        async with Client(
            transport, mode=era, cache=None, read_timeout_seconds=READ_TIMEOUT
        ) as client:
            yield client


@dataclass(frozen=True)
class HttpTarget:
    """A streamable HTTP endpoint, with an optional bearer token."""

    url: str
    token: str | None = field(default=None, repr=False)

    @property
    def label(self) -> str:
        return self.url + (" (bearer token)" if self.token else "")

    @asynccontextmanager
    async def connect(self, era: Era) -> AsyncIterator[Client]:
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else None
        async with create_mcp_http_client(headers=headers) as http:
            transport = streamable_http_client(self.url, http_client=http)
            async with Client(
                transport, mode=era, cache=None, read_timeout_seconds=READ_TIMEOUT
            ) as client:
                yield client


@dataclass(frozen=True)
class InProcessTarget:
    """A low-level `Server` made fresh for each connection (tests)."""

    make_server: Callable[[], Server[Any]]
    name: str = "in-process server"

    @property
    def label(self) -> str:
        return self.name

    @asynccontextmanager
    async def connect(self, era: Era) -> AsyncIterator[Client]:
        async with Client(
            self.make_server(), mode=era, cache=None, read_timeout_seconds=READ_TIMEOUT
        ) as client:
            yield client


Target = StdioTarget | HttpTarget | InProcessTarget


def parse_target(words: Sequence[str], token: str | None = None) -> Target:
    """`words` as given on the command line: one URL, one quoted command, or a command's words."""
    if not words:
        raise ValueError("give a target: a command line (after --) or an http(s) URL")
    if len(words) == 1 and words[0].startswith(("http://", "https://")):
        return HttpTarget(words[0], token)
    argv = shlex.split(words[0]) if len(words) == 1 else list(words)
    if not argv:
        raise ValueError("the target command is empty")
    return StdioTarget(tuple(argv))
