"""The passwords to try on the file being read, and how a user gives them.

A job sets them around its extraction (`trying`); the readers that decrypt (OOXML through
msoffcrypto-tool in `ooxml.decrypt`, PDF through pypdf in `pdf.open`) ask `candidates`, which
puts the password the format's own application tries without asking first: `VelvetSweatshop`
for OOXML, the empty password for PDF. Passwords live only in the worker's memory while the
job runs: never in an error message, a log line or a tree.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

OOXML_DEFAULT = "VelvetSweatshop"
"""The password Excel and Word open an encrypted package with without asking."""
PDF_DEFAULT = ""

HOW_TO_GIVE = (
    "give its password in a passwords file: dpe-server --passwords FILE, or the "
    "DPE_SERVER_PASSWORDS environment variable naming it; a TOML file with a `default` list "
    "of passwords and a [files] table mapping glob patterns of paths to passwords"
)
"""How a user lets the server open a protected file, for error messages."""

_GIVEN: ContextVar[tuple[str, ...]] = ContextVar("dpe_passwords", default=())


@contextmanager
def trying(passwords: Sequence[str]) -> Iterator[None]:
    """Within the block, `candidates` offers `passwords` (the ones given for this file)."""
    token = _GIVEN.set(tuple(passwords))
    try:
        yield
    finally:
        _GIVEN.reset(token)


def candidates(always: str) -> tuple[str, ...]:
    """`always` first, then the passwords given for the file being read."""
    return (always, *(p for p in _GIVEN.get() if p != always))
