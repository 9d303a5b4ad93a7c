"""The passwords to try on the file being read, and how a user gives them.

A job sets them around its extraction (`trying`); the readers that decrypt (OOXML through
msoffcrypto-tool in `ooxml.decrypt`, PDF through pypdf in `pdf.open`) ask `candidates`, which
puts the password the format's own application tries without asking first: `VelvetSweatshop`
for OOXML, the empty password for PDF. Passwords live only in the worker's memory while the
job runs: never in an error message, a log line or a tree.

Trying a password costs what the file's key derivation costs (an agile OOXML file: 100,000
SHA-512 rounds, ~40 ms), so the tries on one file stop after `seconds` (the job's share of its
deadline): a protected file no password opens is then `encrypted`, saying how many were tried
(`untried_note`), rather than a job stopped at its deadline as `timeout`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

OOXML_DEFAULT = "VelvetSweatshop"
"""The password Excel and Word open an encrypted package with without asking."""
PDF_DEFAULT = ""

HOW_TO_GIVE = (
    "give its password in a passwords file: dpe-server serve FOLDER --passwords FILE, or the "
    "DPE_SERVER_PASSWORDS environment variable naming it; a TOML file with a `default` list "
    "of passwords and a [files] table mapping glob patterns of paths to passwords"
)
"""How a user lets the server open a protected file, for error messages."""

TRY_SECONDS = 6.0
"""Seconds spent trying passwords on one file in one job, by default (a worker pool gives
half its probe deadline: `isolation.workers`)."""

_GIVEN: ContextVar[tuple[tuple[str, ...], float]] = ContextVar(
    "dpe_passwords", default=((), TRY_SECONDS)
)


@contextmanager
def trying(passwords: Sequence[str], seconds: float = TRY_SECONDS) -> Iterator[None]:
    """Within the block, `candidates` offers `passwords` (the ones given for this file), for
    `seconds` of tries at most."""
    token = _GIVEN.set((tuple(passwords), seconds))
    try:
        yield
    finally:
        _GIVEN.reset(token)


class Candidates:
    """The passwords to try, in order, while the time allowed lasts: iterating stops at the
    first password asked for once `seconds` have passed since the first (which is always
    offered, as is the format's own). `cut` then says how many were left untried."""

    def __init__(self, passwords: tuple[str, ...], seconds: float) -> None:
        self.passwords = passwords
        self.seconds = seconds
        self.tried = 0
        self.cut = False

    def __len__(self) -> int:
        return len(self.passwords)

    def __iter__(self) -> Iterator[str]:
        start = time.monotonic()
        for i, password in enumerate(self.passwords):
            if i > 1 and time.monotonic() - start >= self.seconds:
                self.cut = True
                return
            self.tried = i + 1
            yield password


def candidates(always: str) -> Candidates:
    """`always` first, then the passwords given for the file being read."""
    given, seconds = _GIVEN.get()
    return Candidates((always, *(p for p in given if p != always)), seconds)


def untried_note(tries: Candidates) -> str:
    """What an `encrypted` message adds when the time ran out before every password was
    tried: how many were, and how to have the right one tried first ("" when all were)."""
    if not tries.cut:
        return ""
    return (
        f" (only {tries.tried} of the {len(tries)} passwords were tried, in {tries.seconds:g} s; "
        "give this file's password under a [files] pattern that matches it: those are tried "
        "before the `default` list)"
    )
