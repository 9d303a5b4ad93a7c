"""The project's own errors, in one place.

    DpeError                      anything this package raises on purpose
    ├── RequestError              the client asked for something that cannot be served
    │   ├── InvalidUri            4204: the URI fails a validation rule of SPEC §2
    │   ├── DocumentNotFound      4201: unknown host or doc_ref
    │   ├── PageNotFound          4202: page index out of range
    │   └── ElementNotFound       4203: no element with that id
    └── ExtractionError           a file could not be turned into a tree
        ├── EncryptedError        kind "encrypted": needs a password
        ├── CorruptError          kind "corrupt": broken, truncated or half-written
        ├── UnsupportedError      kind "unsupported": not a format or variant we read
        ├── TooLargeError         kind "too_large": over a size or inflation cap
        └── ExtractionTimeout     kind "timeout": the parse ran past its deadline

Messages are one plain sentence a person can act on (SPEC §3). The MCP layer maps these to
JSON-RPC errors in one function (`dpe_server.surface.errors`); nothing else chooses codes.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import ClassVar, Literal

ErrorKind = Literal["encrypted", "corrupt", "unsupported", "too_large", "timeout"]


class DpeError(Exception):
    """Base of every error this package raises on purpose."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class RequestError(DpeError):
    """A `resources/read` (or tool call) that cannot be answered; carries a DPE code.

    Raised where the problem is found, which need not know the URI being read: `reading(uri)`
    around a read gives the error its URI, in one place.
    """

    dpe_code: ClassVar[int]

    def __init__(self, message: str, uri: str = "") -> None:
        super().__init__(message)
        self.uri = uri

    def data(self) -> dict[str, object]:
        """The JSON-RPC `data` of SPEC §3."""
        return {"uri": self.uri, "dpe_code": self.dpe_code}


class InvalidUri(RequestError):
    """The URI breaks a validation rule; `rule` names it, `reason` explains it."""

    dpe_code = 4204

    def __init__(self, uri: str, rule: str, reason: str) -> None:
        super().__init__(f"Invalid dpe URI ({rule}): {reason}.", uri)
        self.rule = rule
        self.reason = reason

    def data(self) -> dict[str, object]:
        return {**super().data(), "reason": f"{self.rule}: {self.reason}"}


class DocumentNotFound(RequestError):
    """No document with that doc_ref on this host (or the host is not this server's)."""

    dpe_code = 4201


class PageNotFound(RequestError):
    """The page index is past the document's last page."""

    dpe_code = 4202

    def __init__(self, message: str, uri: str = "", *, page_count: int) -> None:
        super().__init__(message, uri)
        self.page_count = page_count

    def data(self) -> dict[str, object]:
        return {**super().data(), "page_count": self.page_count}


class ElementNotFound(RequestError):
    """No element with that id in the document."""

    dpe_code = 4203


@contextmanager
def reading(uri: str) -> Iterator[None]:
    """A `RequestError` raised in the block is about `uri` (the URI being read)."""
    try:
        yield
    except RequestError as exc:
        exc.uri = exc.uri or uri
        raise


class ExtractionError(DpeError):
    """A file could not be read; the catalog lists it with `{kind, message}`."""

    kind: ClassVar[ErrorKind]

    def __init__(self, message: str, *, transient: bool = False, bound: bool = False) -> None:
        super().__init__(message)
        self.transient = transient
        """True when a retry may succeed (a file caught half-written)."""
        self.bound = bound
        """True when the failure hit a limit the server was started with (a worker's memory,
        a deadline): kept with those limits, and the file read again once they change."""

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind, "message": self.message}


class EncryptedError(ExtractionError):
    """The file is password-protected."""

    kind = "encrypted"


class CorruptError(ExtractionError):
    """The file is damaged, truncated or not what its suffix says in a way we cannot read."""

    kind = "corrupt"


class UnsupportedError(ExtractionError):
    """The file is of a type or variant this server does not read."""

    kind = "unsupported"


class TooLargeError(ExtractionError):
    """The file is over a size, member-count, inflation or ratio cap."""

    kind = "too_large"


class ExtractionTimeout(ExtractionError):
    """The parse did not finish within its deadline and was stopped."""

    kind = "timeout"


ERROR_KINDS: dict[str, type[ExtractionError]] = {
    cls.kind: cls
    for cls in (EncryptedError, CorruptError, UnsupportedError, TooLargeError, ExtractionTimeout)
}


def extraction_error(kind: str, message: str) -> ExtractionError:
    """Rebuild an extraction error from its JSON form (worker results, the cache)."""
    return ERROR_KINDS.get(kind, CorruptError)(message)
