"""A child's bytes (docs/children.md): read from its container, in memory, by the container's
format (`Format.member`), down each path inside; checked as a file of its own kind is before
it is parsed (the caller's `precheck`)."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import BinaryIO

from dpe_server.extractors import Limits, format_of, read_as, unlocked
from dpe_server.isolation.precheck import precheck
from dpe_server.model import children
from dpe_server.model.errors import CorruptError, TooLargeError, UnsupportedError

MAX_CHILD_BYTES = 256 * 1024 * 1024
"""A child's bytes at most (held in memory, never written to disk)."""


def child_of(f: BinaryIO, file_rel: str, inner: Sequence[str], limits: Limits) -> BinaryIO:
    """`f` itself for a file (no `inner` paths), else the child at the end of `inner`."""
    if len(inner) > children.MAX_DEPTH:
        raise TooLargeError(
            f"The document is nested {len(inner)} deep; documents inside documents are read "
            f"{children.MAX_DEPTH} deep at most."
        )
    name = file_rel
    for path in inner:
        fmt = format_of(name)
        if fmt is None or fmt.member is None:
            raise UnsupportedError(f"{name.rpartition('/')[2]} holds no documents to read.")
        suffix = read_as(f, name)
        f = unlocked(f, suffix)
        precheck(f, suffix, limits)
        try:
            data = fmt.member(f, path, limits)
        except KeyError:
            raise CorruptError(
                f"{name.rpartition('/')[2]} no longer holds {path}; it may have changed.",
                transient=True,
            ) from None
        if len(data) > MAX_CHILD_BYTES:
            raise TooLargeError(
                f"{path} is {len(data) // (1024 * 1024)} MiB, over the limit of "
                f"{MAX_CHILD_BYTES // (1024 * 1024)} MiB for a document inside another."
            )
        if not data:
            raise CorruptError(f"{path} is empty (0 bytes).")
        f, name = io.BytesIO(data), path
    return f
