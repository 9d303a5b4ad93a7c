"""The notification fan-out: which subscribed URIs a change concerns, matched without parsing."""

from __future__ import annotations

import contextlib
from types import SimpleNamespace
from typing import Any

import pytest

from dpe_server.catalog.catalog import Change
from dpe_server.surface import notify
from dpe_server.surface.notify import Hub

pytestmark = pytest.mark.anyio


class Connection:
    """A handshake-era connection recording what is pushed to it."""

    def __init__(self) -> None:
        self.exit_stack = contextlib.ExitStack()
        self.pushed: list[str] = []

    async def send_resource_list_changed(self) -> None:
        self.pushed.append("list_changed")

    async def send_resource_updated(self, uri: str) -> None:
        self.pushed.append(uri)


def _ctx(connection: Connection) -> Any:
    return SimpleNamespace(
        protocol_version="2025-06-18", session=SimpleNamespace(_connection=connection)
    )


async def test_a_change_is_matched_against_subscriptions_parsed_when_subscribed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each announcement is matched against every subscription of every session: what a URI
    names (host, doc_ref) is parsed once, when subscribed, not again at every change."""
    hub = Hub("Host")
    connection = Connection()
    ctx = _ctx(connection)
    uris = [
        "dpe://host/deck-aaaaaa",
        "dpe://host/deck-aaaaaa/pages/2",
        "dpe://HOST",
        "dpe://host/notes-bbbbbb",
        "dpe://other/deck-aaaaaa",
        "not a uri",
    ]
    for uri in uris:
        hub.subscribe(ctx, uri)
    hub.unsubscribe(ctx, "dpe://host/notes-bbbbbb")

    def no_parse(uri: str) -> Any:
        raise AssertionError(f"{uri} parsed again at a change")

    monkeypatch.setattr(notify, "parse", no_parse)
    await hub.publish(Change(updated=frozenset({"deck-aaaaaa", "notes-bbbbbb"})))
    assert connection.pushed == uris[:3]
    connection.pushed.clear()
    await hub.publish(Change(list_changed=True))
    assert connection.pushed == ["list_changed", "dpe://HOST"]
