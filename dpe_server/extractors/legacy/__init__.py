"""Legacy Word (.doc), Rich Text (.rtf) and legacy PowerPoint (.ppt): read by converting them
with LibreOffice (`soffice`, when it is on PATH) to .docx / .pptx in a private temporary
folder, then reading the result with the docx / pptx extractor, which the registry hands it
(`read_converted_with`: a format imports no other). `kinds` tells what a file under a legacy
name really is, by its bytes; `convert` runs the conversion, kept off the network by
`kit.sandbox`, run by `kit.soffice`; `extract` reads the converted file.

Without `soffice` the files are listed `unsupported`, saying that installing LibreOffice
enables them. Whether `soffice` is found is part of the cache key (`Format.tools`), so
installing or removing it re-reads these files.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from typing import BinaryIO

from dpe_server.extractors.base import Format, Limits
from dpe_server.extractors.kit.handed import Handed
from dpe_server.model.errors import UnsupportedError
from dpe_server.model.tree import JSON

SOFFICE = "soffice"
_TARGET = {"doc": "docx", "rtf": "docx", "ppt": "pptx"}
_WHAT = {"doc": "legacy Word (.doc)", "rtf": "Rich Text (.rtf)", "ppt": "legacy PowerPoint (.ppt)"}


def missing_error(fmt: str) -> UnsupportedError:
    return UnsupportedError(
        f"Reading {_WHAT.get(fmt, '.' + fmt)} files needs LibreOffice: install it (the "
        f"`{SOFFICE}` command on PATH; on Debian or Ubuntu the libreoffice-writer-nogui and "
        "libreoffice-impress-nogui packages) and restart the server to read them."
    )


def _check(f: BinaryIO, fmt: str, kind: str, limits: Limits) -> None:
    """What the bytes say: a zip or a PDF under these suffixes is named; otherwise they must
    be the legacy format itself (`kinds.conversion_kind`: an OLE2 file holding the format's
    stream, or Rich Text), never something else LibreOffice would open by its content. Then:
    is LibreOffice there?"""
    if kind == "zip":
        from dpe_server.extractors.kit.zips import zip_kind

        raise UnsupportedError(
            f"This file is {zip_kind(f)} renamed to .{fmt}; give it its own suffix."
        )
    if kind == "pdf":
        raise UnsupportedError(f"This file is a PDF renamed to .{fmt}; rename it to .pdf.")
    from dpe_server.extractors.legacy.kinds import conversion_kind

    conversion_kind(f, fmt)
    if shutil.which(SOFFICE) is None:
        raise missing_error(fmt)


def _picture(f: BinaryIO, fmt: str, metadata: Mapping[str, JSON], max_bytes: int) -> bytes | None:
    from dpe_server.extractors.legacy.extract import picture

    return picture(f, fmt, metadata, max_bytes)


def _format(name: str, suffixes: tuple[str, ...], kind_name: str, unit: str) -> Format:
    return Format(
        name=name,
        suffixes=suffixes,
        kind_name=kind_name,
        page_unit=unit,
        paged=False,
        extractor=f"dpe_server.extractors.legacy.extract:{name.upper()}",
        check=_check,
        picture=_picture,
        tools=(SOFFICE,),
        probe_reads_whole=True,
        pdf_export=True,
    )


WORD = _format("doc", (".doc", ".rtf"), "a legacy Word document", "section")
POWERPOINT = _format("ppt", (".ppt",), "a legacy PowerPoint deck", "slide")


_READ_AS: Handed[Mapping[str, Format]] = Handed("format for converted legacy files")


def read_converted_with(formats: Mapping[str, Format]) -> None:
    """Read a converted file with the format `formats` names for its suffix: the registry's,
    handed over when it registers the formats (`registry.py`), so that legacy imports neither
    another format nor the registry."""
    _READ_AS.give(formats)


def converted_format(fmt: str) -> Format | None:
    """The format a legacy file of type `fmt` is read as once converted (docx, pptx)."""
    formats = _READ_AS.maybe()
    return formats.get("." + _TARGET[fmt]) if formats is not None else None


def target(fmt: str) -> str:
    """The OOXML format a legacy file is converted to."""
    return _TARGET[fmt]
