"""What `serve` tells the person who started it, on stderr, once the folder is indexed and the
transport listens:

    dpe-server: serving 191 documents from /data/reports as dpe://local.dpe.reports on stdio
    dpe-server: 39 unreadable (30 encrypted, 9 corrupt); to list them: dpe-server read ...
    dpe-server: next: ...; Ctrl-C to stop

The first line always, the second when a file could not be read (or, in a folder with no file
of a type read, which types are), both kept in a host's log; the third, what to do next, only
on a terminal. Later changes of the counts are logged at info level.
"""

from __future__ import annotations

import logging
import shlex
import sys
from collections import Counter
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from dpe_server.surface.app import DpeApp

log = logging.getLogger("dpe_server")

KIND_WORDS = {"too_large": "too large", "timeout": "timed out"}
"""How an error kind reads in a count (others read as they are spelled: `2 encrypted`)."""


class Banner:
    """Printed once both halves are known: the folder indexed (`indexed`) and where the
    transport listens (`listening`); `recount` logs what changed since."""

    def __init__(self, app: DpeApp, stream: TextIO | None = None) -> None:
        self.app = app
        self.stream = sys.stderr if stream is None else stream
        self.where: str | None = None
        self.ready = False
        self.shown: tuple[int, str] | None = None

    def indexed(self) -> None:
        self.ready = True
        self._show()

    def listening(self, where: str) -> None:
        self.where = where
        self._show()

    def recount(self) -> None:
        if self.shown is None:
            return
        counts = self._counts()
        if counts != self.shown:
            self.shown = counts
            documents, unreadable = counts
            log.info("now %d documents, %s", documents, unreadable or "all readable")

    def _show(self) -> None:
        if not self.ready or self.where is None:
            return
        self.shown = documents, unreadable = self._counts()
        app = self.app
        lines = [f"serving {documents} documents from {app.catalog.root} as dpe://{app.host} "]
        lines[0] += f"on {self.where}"
        if not documents:
            lines.append(no_documents(str(app.catalog.root)))
        if unreadable:
            listing = shlex.join(
                ["dpe-server", "read", str(app.catalog.root), f"dpe://{app.host}?format=text"]
            )
            lines.append(f"{unreadable}; to list them: {listing}")
        if self.stream.isatty():
            lines.append(next_step(self.where))
        self.stream.write("".join(f"dpe-server: {line}\n" for line in lines))
        self.stream.flush()

    def _counts(self) -> tuple[int, str]:
        """(documents, `N unreadable (2 encrypted, 1 corrupt)` or "")."""
        entries = self.app.catalog.entries()
        kinds = Counter[str](e.error.kind for e in entries if e.error is not None)
        return len(entries), unreadable(kinds)


def unreadable(kinds: Counter[str]) -> str:
    """`3 unreadable (2 encrypted, 1 corrupt)`, most frequent kind first; "" for none."""
    if not kinds:
        return ""
    ordered = sorted(kinds.items(), key=lambda item: (-item[1], item[0]))
    parts = ", ".join(f"{n} {KIND_WORDS.get(kind, kind)}" for kind, n in ordered)
    return f"{kinds.total()} unreadable ({parts})"


def no_documents(root: str) -> str:
    """The hint for a folder holding no file of a type the server reads."""
    from dpe_server.extractors import FORMATS

    suffixes = ", ".join(sorted(FORMATS))
    return (
        f"no document to serve: {root} holds no file of a type read ({suffixes}; "
        "docs/formats.md); files added later are served as they appear"
    )


def next_step(where: str) -> str:
    if where == "stdio":
        return (
            "next: an MCP client runs this command itself: add it to the client's "
            "configuration (the Claude Desktop snippet in README.md); Ctrl-C to stop"
        )
    url = where.split(maxsplit=1)[0]
    return f"next: point an MCP client at {url} (see docs/clients.md); Ctrl-C to stop"
