"""What the OpenDocument formats (odt, odp) share: how each makes its `Format` (`odf_format`:
their checks, `checks`, and picture reader), and, imported when a file is read, the package and
its metadata (`package`), the entry points around an opened file (`reader`), styles and list
numbering (`styles`), paragraphs and what sits in them (`inline`, `frames`, form fields written
inside a paragraph: `fields`), form controls (`forms`), tables (`tables`) and the block flow of
a text (`flow`).

An OpenDocument file is a zip with a `mimetype` member and XML parts (content.xml,
styles.xml, meta.xml), read through the same guarded package reader as OOXML
(`extractors.kit.package.Package`: size caps while inflating, no DOCTYPE, no entities); or
one flat XML document (.fodt, .fodp, .fods) read as such a package (`flat`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import BinaryIO

from dpe_server.extractors.base import Check, Format, Limits
from dpe_server.extractors.kit.pictures import picture
from dpe_server.model.tree import JSON


def _check(mimetypes: tuple[str, ...]) -> Check:
    def check(f: BinaryIO, fmt: str, kind: str, limits: Limits) -> None:
        from dpe_server.extractors.odf.checks import check_package

        check_package(f, fmt, kind, limits, mimetypes)

    return check


def _picture(f: BinaryIO, fmt: str, metadata: Mapping[str, JSON], max_bytes: int) -> bytes | None:
    """The picture an image element names: a package's member, or a flat file's embedded one."""
    from dpe_server.extractors.odf.flat import open_package

    return picture(f, fmt, metadata, max_bytes, opener=open_package)


def odf_format(
    name: str,
    suffixes: tuple[str, ...],
    kind_name: str,
    page_unit: str,
    *,
    paged: bool,
    mimetypes: tuple[str, ...],
) -> Format:
    """The `Format` of an OpenDocument format whose `mimetype` member is one of `mimetypes`,
    read by `dpe_server.extractors.<name>.extract`."""
    return Format(
        name=name,
        suffixes=suffixes,
        kind_name=kind_name,
        page_unit=page_unit,
        paged=paged,
        extractor=f"dpe_server.extractors.{name}.extract:EXTRACTOR",
        check=_check(mimetypes),
        picture=_picture,
        pdf_export=True,
        recognises_pictures=False,
    )
