"""A picture's bytes read from a zip package: the member an image element's metadata names
(`metadata.part`), for the `Format.picture` of the OOXML and OpenDocument formats (and of the
legacy ones, through their converted package)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, BinaryIO

from dpe_server.extractors.base import DEFAULT_LIMITS, Limits
from dpe_server.model.tree import JSON

if TYPE_CHECKING:
    from dpe_server.extractors.kit.package import Package


def picture(
    f: BinaryIO,
    fmt: str,
    metadata: Mapping[str, JSON],
    max_bytes: int,
    opener: Callable[[BinaryIO, str, Limits], Package] | None = None,
) -> bytes | None:
    """An OOXML picture: the zip member the image element names in `metadata.part`; the
    package opened by `opener` (`Package` by default)."""
    from dpe_server.extractors.kit.package import Package

    part = metadata.get("part")
    if not isinstance(part, str):
        return None
    with (opener or Package)(f, fmt, DEFAULT_LIMITS) as pkg:
        if not pkg.has(part) or pkg.size(part) > max_bytes:
            return None
        return pkg.read(part)
