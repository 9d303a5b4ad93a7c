"""What the OOXML formats share: the checks of their packages (`checks`), Strict namespaces read
as Transitional (`strict`), DrawingML charts, SmartArt and pictures (`drawingml`, `pictures`),
Office Math (`omml`), macros (`macros`), decryption (`decrypt`, `ecma376`), what a picture's
text is (`picture_text`) and the packages embedded in a package (`embedded`: documents of
their own, docs/children.md; `oleobject`: the file an embedded OLE object carries). The
functions below are what the OOXML formats' `Format` objects point at; they import the
package reader (`kit.package`) when called.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, BinaryIO

from dpe_server.extractors.base import Check, Format, Limits
from dpe_server.extractors.kit.handed import Handed
from dpe_server.extractors.kit.pictures import picture
from dpe_server.model.content import TableContent
from dpe_server.model.tree import JSON

if TYPE_CHECKING:
    from dpe_server.extractors.ocr import Word

PictureTable = Callable[[Sequence["Word"], int, int], TableContent | None]
"""`table(words, width, height)`: the table a picture's recognised words stand in, or None."""
_PICTURE_TABLE: Handed[PictureTable] = Handed("picture table reader for ooxml")


def check(prefix: str) -> Check:
    """The `Format.check` of an OOXML format whose parts live under `prefix` (`xl/`)."""

    def check_package(f: BinaryIO, fmt: str, kind: str, limits: Limits) -> None:
        from dpe_server.extractors.ooxml import checks

        checks.check_package(f, fmt, kind, limits, prefix)

    return check_package


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
        member=_embedding,
        embedded=functools.partial(_embeddings, prefix),
        package_prefix=prefix,
        pdf_export=True,
    )


def _embeddings(prefix: str, f: BinaryIO, limits: Limits) -> list[JSON]:
    from dpe_server.extractors.ooxml.embedded import embeddings

    return embeddings(f, prefix, limits)


def _embedding(f: BinaryIO, path: str, limits: Limits) -> bytes:
    from dpe_server.extractors.ooxml.embedded import embedding

    return embedding(f, path, limits)


def read_picture_tables_with(table: PictureTable) -> None:
    """Find the table in a picture's recognised words (`picture_text`) with `table`: the pdf
    page layout's, which the registry hands over when it registers the formats
    (`registry.py`), so that ooxml imports no format."""
    _PICTURE_TABLE.give(table)


def picture_table(words: Sequence[Word], width: int, height: int) -> TableContent | None:
    """The table a picture's recognised words stand in (None also when no reader was handed)."""
    table = _PICTURE_TABLE.maybe()
    return table(words, width, height) if table is not None else None
