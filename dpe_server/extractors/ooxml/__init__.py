"""What the OOXML formats share: the guarded package reader (`package`) and its checks
(`checks`), A1 references (`a1`), DrawingML charts, SmartArt and pictures (`drawingml`,
`pictures`, `drawing_summary`) and Office Math (`omml`). The functions below are what the
OOXML formats' `Format` objects point at; they import the package reader when called."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, BinaryIO

from dpe_server.extractors.base import DEFAULT_LIMITS, Check, Format, Limits
from dpe_server.model.tree import JSON

if TYPE_CHECKING:
    from dpe_server.extractors.ooxml.package import Package


def check(prefix: str) -> Check:
    """The `Format.check` of an OOXML format whose parts live under `prefix` (`xl/`)."""

    def check_package(f: BinaryIO, fmt: str, kind: str, limits: Limits) -> None:
        from dpe_server.extractors.ooxml import checks

        checks.check_package(f, fmt, kind, limits, prefix)

    return check_package


def picture(
    f: BinaryIO,
    fmt: str,
    metadata: Mapping[str, JSON],
    max_bytes: int,
    opener: Callable[[BinaryIO, str, Limits], Package] | None = None,
) -> bytes | None:
    """An OOXML picture: the zip member the image element names in `metadata.part`; the
    package opened by `opener` (`Package` by default)."""
    from dpe_server.extractors.ooxml.package import Package

    part = metadata.get("part")
    if not isinstance(part, str):
        return None
    with (opener or Package)(f, fmt, DEFAULT_LIMITS) as pkg:
        if not pkg.has(part) or pkg.size(part) > max_bytes:
            return None
        return pkg.read(part)


def package_format(
    name: str,
    suffixes: tuple[str, ...],
    kind_name: str,
    page_unit: str,
    *,
    paged: bool,
    prefix: str,
) -> Format:
    """The `Format` of an OOXML format whose parts live under `prefix`, read by
    `dpe_server.extractors.<name>.extract`."""
    return Format(
        name=name,
        suffixes=suffixes,
        kind_name=kind_name,
        page_unit=page_unit,
        paged=paged,
        extractor=f"dpe_server.extractors.{name}.extract:EXTRACTOR",
        check=check(prefix),
        picture=picture,
        package_prefix=prefix,
    )
