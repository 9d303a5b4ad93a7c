"""Who listens to what, and the one function that tells them (both protocol eras).

- Handshake era (2024-11-05 … 2025-11-25): `resources/subscribe` per URI, pushes on the
  connection. The SDK has no public registry of connections; the stable per-connection
  object is the private `ctx.session._connection`. Its use is confined to this module.
- 2026-07-28 era: `subscriptions/listen` streams fed by a `SubscriptionBus`; a listened URI
  matches exactly, so every listened variant (page URIs, query strings) of a changed document
  is published.

`Hub.publish(change)` is the only way the server notifies: the catalog calls it (through
`on_change`) and never knows about sessions.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable
from typing import Any

import anyio
from mcp.server.context import ServerRequestContext
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    ResourcesListChanged,
    ResourceUpdated,
    SubscriptionBus,
)
from mcp_types import SubscriptionsListenRequestParams, SubscriptionsListenResult
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from dpe_server.catalog.catalog import Change
from dpe_server.model.errors import InvalidUri
from dpe_server.model.uri import format_uri, parse

log = logging.getLogger(__name__)

SEND_TIMEOUT = 2.0
"""Seconds a push to one session may take before it is dropped."""


def is_modern(protocol_version: str) -> bool:
    return protocol_version in MODERN_PROTOCOL_VERSIONS


Target = tuple[str, str | None] | None
"""What a subscribed URI names: (host, doc_ref), doc_ref None for Level 0; None when it is no
dpe URI. Parsed once, when subscribed: every change is matched against every subscription."""


def _target_of(uri: str) -> Target:
    try:
        parsed = parse(uri)
    except InvalidUri:
        return None
    return parsed.host.lower(), parsed.doc_ref


class _Session:
    """A handshake-era connection and the URIs it subscribed to, with what each names."""

    def __init__(self, connection: Any) -> None:
        self.connection = connection
        self.subscriptions: dict[str, Target] = {}


class Hub:
    """Subscriptions of both eras and the sessions to push to."""

    def __init__(self, host: str, *, broadcast_updates: bool = False) -> None:
        self.host = host
        self.broadcast_updates = broadcast_updates
        self.bus: SubscriptionBus = InMemorySubscriptionBus()
        self._listen = ListenHandler(self.bus)
        self._sessions: dict[int, _Session] = {}
        self._listened: Counter[str] = Counter()
        self._listened_targets: dict[str, Target] = {}
        """What each listened URI names (`_listened`'s keys, parsed once)."""

    # ---- registration --------------------------------------------------------------------

    def session_of(self, ctx: ServerRequestContext[Any, Any]) -> _Session | None:
        """The handshake-era session of a request (registered on first sight), else None."""
        if is_modern(ctx.protocol_version):
            return None
        connection = ctx.session._connection
        key = id(connection)
        session = self._sessions.get(key)
        if session is None:
            session = self._sessions[key] = _Session(connection)

            def forget() -> None:
                self._sessions.pop(key, None)

            connection.exit_stack.callback(forget)
        return session

    def connection_key(self, ctx: ServerRequestContext[Any, Any]) -> int:
        """A key identifying the connection of a request (for per-session rate limits)."""
        return id(ctx.session._connection)

    def subscribe(self, ctx: ServerRequestContext[Any, Any], uri: str) -> None:
        session = self.session_of(ctx)
        if session is not None:
            session.subscriptions[uri] = _target_of(uri)

    def unsubscribe(self, ctx: ServerRequestContext[Any, Any], uri: str) -> None:
        session = self.session_of(ctx)
        if session is not None:
            session.subscriptions.pop(uri, None)

    async def listen(
        self, ctx: ServerRequestContext[Any, Any], params: SubscriptionsListenRequestParams
    ) -> SubscriptionsListenResult:
        """`subscriptions/listen`: remember the listened URIs while the stream is open."""
        uris = list(params.notifications.resource_subscriptions or ())
        for uri in uris:
            if uri not in self._listened_targets:
                self._listened_targets[uri] = _target_of(uri)
        self._listened.update(uris)
        try:
            return await self._listen(ctx, params)
        finally:
            self._listened.subtract(uris)
            self._listened += Counter()  # drop zero counts
            for uri in uris:
                if uri not in self._listened:
                    self._listened_targets.pop(uri, None)

    # ---- publishing ----------------------------------------------------------------------

    def _affected(self, targets: Iterable[tuple[str, Target]], change: Change) -> list[str]:
        """The subscribed URIs `change` concerns (`targets`: each with what it names)."""
        out = []
        host = self.host.lower()
        for uri, ref in targets:
            if ref is None or ref[0] != host:
                continue
            host_level = ref[1] is None
            if (host_level and (change.list_changed or change.updated)) or ref[1] in change.updated:
                out.append(uri)
        return out

    async def publish(self, change: Change) -> None:
        """Tell every interested session of both eras about `change`."""
        if change.list_changed:
            await self.bus.publish(ResourcesListChanged())
        for uri in self._affected(list(self._listened_targets.items()), change):
            await self.bus.publish(ResourceUpdated(uri=uri))
        sessions = list(self._sessions.values())
        async with anyio.create_task_group() as tg:
            for session in sessions:
                tg.start_soon(self._push_legacy, session, change)

    async def _push_legacy(self, session: _Session, change: Change) -> None:
        uris = self._affected(list(session.subscriptions.items()), change)
        if self.broadcast_updates:
            for ref in sorted(change.updated):
                level1 = format_uri(self.host, ref)
                if level1 not in uris:
                    uris.append(level1)
        conn = session.connection
        with anyio.move_on_after(SEND_TIMEOUT):
            if change.list_changed:
                await conn.send_resource_list_changed()
            for uri in uris:
                await conn.send_resource_updated(uri)
