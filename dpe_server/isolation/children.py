"""A child's bytes (docs/children.md): read from its container, in memory, by the container's
format (`Format.member`, or `Format.members` for many children of one container: a batch opens
it once), down each path inside; checked as a file of its own kind is before it is parsed (the
caller's `precheck`)."""

from __future__ import annotations

import functools
import io
from collections.abc import Callable, Iterator, Sequence
from typing import BinaryIO

from dpe_server.extractors import Limits, format_of, read_as, unlocked
from dpe_server.extractors.base import Member
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
        f, member = _opened(f, name, limits)
        f, name = _checked(functools.partial(member, f, path, limits), name, path), path
    return f


def children_of(
    f: BinaryIO, name: str, paths: Sequence[str], limits: Limits
) -> Iterator[tuple[str, Callable[[], BinaryIO]]]:
    """Each of `paths` inside `f` (named `name`), with how to read its bytes (which raises
    the project's error when they cannot be): the container opened and checked once."""
    fmt = format_of(name)
    f, member = _opened(f, name, limits)
    if fmt is None or fmt.members is None:
        found: Iterator[tuple[str, Callable[[], bytes]]] = (
            (path, functools.partial(member, f, path, limits)) for path in paths
        )
    else:
        found = fmt.members(f, paths, limits)
    for path, read in found:
        yield path, functools.partial(_checked, read, name, path)


def _opened(f: BinaryIO, name: str, limits: Limits) -> tuple[BinaryIO, Member]:
    """The container `f` (named `name`) checked as its kind's files are, and how its format
    reads a document inside it."""
    fmt = format_of(name)
    if fmt is None or fmt.member is None:
        raise UnsupportedError(f"{name.rpartition('/')[2]} holds no documents to read.")
    suffix = read_as(f, name)
    f = unlocked(f, suffix)
    precheck(f, suffix, limits)
    return f, fmt.member


def _checked(read: Callable[[], bytes], name: str, path: str) -> BinaryIO:
    """The bytes `read` reads of the document at `path` inside `name`, within the caps."""
    try:
        data = read()
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
    return io.BytesIO(data)
