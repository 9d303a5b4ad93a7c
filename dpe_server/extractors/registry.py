"""The formats the server reads: one `Format` per format, registered here (one line each).

Adding a format is one subpackage that defines its `FORMAT`, plus one line below; the catalog,
the checks before parsing, the picture reader and the cache key ask this registry.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Sequence
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, BinaryIO

from dpe_server.extractors import (
    archive,
    delimited,
    docx,
    epub,
    html,
    legacy,
    mail,
    markdown,
    odp,
    odt,
    ooxml,
    pdf,
    picture,
    pptx,
    sheets,
    text,
    xlsx,
)
from dpe_server.extractors.base import Extractor, Format
from dpe_server.extractors.kit import values
from dpe_server.extractors.kit.media import PACKAGE_KINDS
from dpe_server.model.content import TableContent
from dpe_server.model.tree import PageBuilder

if TYPE_CHECKING:
    from dpe_server.extractors.ocr import Word

FORMATS: dict[str, Format] = {}
"""Formats by lower-case suffix (`.xlsx`)."""


def register(fmt: Format) -> None:
    """Serve files of `fmt` from now on (a later registration of a suffix replaces one)."""
    for suffix in fmt.suffixes:
        FORMATS[suffix.lower()] = fmt
    if fmt.package_prefix:
        PACKAGE_KINDS[fmt.package_prefix] = fmt.kind_name


register(xlsx.FORMAT)
register(pdf.FORMAT)
register(pptx.FORMAT)
register(docx.FORMAT)
register(odt.FORMAT)
register(odp.FORMAT)
register(legacy.WORD)
register(legacy.POWERPOINT)
register(sheets.FORMAT)
register(delimited.CSV)
register(delimited.TSV)
register(html.FORMAT)
register(markdown.FORMAT)
register(text.FORMAT)
register(epub.FORMAT)
register(picture.FORMAT)
register(mail.EML)
register(mail.MSG)
register(mail.MBOX)
register(archive.FORMAT)


def _picture_table(words: Sequence[Word], width: int, height: int) -> TableContent | None:
    """The table in a picture's recognised words, laid out as a pdf page's words are (the pdf
    layout imported on first use)."""
    from dpe_server.extractors.pdf.scanned import picture_table

    return picture_table(words, width, height)


def _picture_elements(words: Sequence[Word], width: int, height: int, b: PageBuilder) -> None:
    """A picture file's recognised words laid out as a scanned pdf page's (the pdf layout
    imported on first use)."""
    from dpe_server.extractors.pdf.picture_page import picture_elements

    picture_elements(words, width, height, b)


# What formats read through other formats is handed to them here, the one place that knows
# every format: legacy reads its converted files with the registered docx and pptx, ooxml
# finds a picture's table, and picture lays a picture's words out, with the pdf page layout;
# Markdown is read as the HTML it renders to and an e-book's chapters as web pages by the web
# page reader; e-mail reads HTML bodies with the html format; the value sheets (.xls, .xlsb,
# .ods, .csv) are laid out as xlsx's cells. None imports another format.
legacy.read_converted_with(FORMATS)
markdown.read_html_with(html.read_text)
epub.read_chapters_with(html.read_chapter)
mail.read_bodies_with(FORMATS)
values.lay_out_values_with(xlsx.values_page)
ooxml.read_picture_tables_with(_picture_table)
picture.lay_out_words_with(_picture_elements)


def suffix_of(path: PurePath | str) -> str:
    """`PurePath(path).suffix`, without building a path from a string (the catalog asks this
    of every file: a relative POSIX path, names never empty nor `.` or `..`)."""
    if not isinstance(path, str):
        return path.suffix
    name = path.rstrip("/").rpartition("/")[2].rpartition("\0")[2]  # a child's: its own
    i = name.rfind(".")
    return name[i:] if 0 < i < len(name) - 1 else ""


def file_type(path: PurePath | str) -> str:
    """SPEC §4 `file_type`: the suffix without its dot, lower case."""
    return suffix_of(path).lower().lstrip(".")


def format_of(path: PurePath | str) -> Format | None:
    """The format of a file by its suffix, or None when it is not one the server reads."""
    return FORMATS.get(suffix_of(path).lower())


def read_as(f: BinaryIO, path: PurePath | str) -> str:
    """The suffix a file is read as: its own, unless it is a legacy Office file (OLE2) under
    an OOXML suffix whose real format is served (an .xls named .xlsx is read as .xls)."""
    from dpe_server.extractors.magic import sniff

    suffix = PurePath(path).suffix.lower()
    fmt = FORMATS.get(suffix)
    if fmt is None or fmt.package_prefix is None or sniff(f) != "cfb":
        return suffix
    from dpe_server.extractors.kit.package import cfb_kind  # only for an OLE2 file

    real = cfb_kind(f)
    return real if real in FORMATS else suffix


def unlocked(f: BinaryIO, suffix: str) -> BinaryIO:
    """`f`, or its decrypted copy in memory when it is a password-protected OOXML package
    (`ooxml.decrypt`: the passwords tried are `extractors.passwords`'); raises
    `EncryptedError` when none opens it."""
    from dpe_server.extractors.magic import sniff

    fmt = FORMATS.get(suffix.lower())
    if fmt is None or fmt.package_prefix is None or sniff(f) != "cfb":
        return f
    from dpe_server.extractors.kit.package import cfb_kind  # only for an OLE2 file

    if cfb_kind(f) != "encrypted":
        return f
    from dpe_server.extractors.ooxml.decrypt import unlock

    return unlock(f, suffix.lower().lstrip("."))


def is_supported(path: PurePath | str) -> bool:
    return format_of(path) is not None


def is_paged(path: PurePath | str) -> bool:
    """Whether one page of the file can be read without the others."""
    fmt = format_of(path)
    return fmt is not None and fmt.paged


def for_suffix(suffix: str) -> Extractor | None:
    """The extractor for a suffix (`.xlsx`), importing its module on first use."""
    fmt = FORMATS.get(suffix.lower())
    return fmt.load() if fmt is not None else None


def for_path(path: PurePath | str) -> Extractor | None:
    return for_suffix(PurePath(path).suffix)


_PACKAGE = Path(__file__).resolve().parents[1]
_TREE_CODE = ("extractors", "model", "isolation")
"""Subpackages whose code decides what a tree (or a file's cached error) holds."""


def extractor_fingerprint(package: Path = _PACKAGE) -> str:
    """A hash of the code that makes trees and errors: every module, by its path and its bytes,
    under `extractors/`, `model/` and `isolation/` (the checks before parsing, the jobs).

    Part of every cache key: any change to how trees are made (or a module moved) invalidates
    cached trees, without anyone having to remember to bump a version. The programs formats
    run (`Format.tools`) count by where they are found, or that they are not.
    """
    digest = hashlib.sha256()
    for folder in _TREE_CODE:
        for rel in sorted(_modules(str(package), folder), key=lambda rel: rel.split("/")):
            digest.update(rel.encode())
            with open(os.path.join(package, rel), "rb") as module:
                digest.update(module.read())
    for tool in sorted({t for fmt in FORMATS.values() for t in fmt.tools}):
        digest.update(f"{tool}={shutil.which(tool)}".encode())
    return digest.hexdigest()[:16]


def _modules(root: str, folder: str) -> list[str]:
    """The relative paths (POSIX) of the `.py` files under `root`/`folder`, at any depth: what
    `Path.rglob("*.py")` finds, ordered as its paths sort (name by name) by the caller, found
    with `os.scandir` (every `dpe-server read` starts with this: `rglob` and its `Path`
    objects were two thirds of it, the hash of 1.1 MB of code the rest)."""
    found: list[str] = []
    with os.scandir(os.path.join(root, folder)) as entries:
        for entry in entries:
            rel = f"{folder}/{entry.name}"
            if entry.is_dir():
                if not entry.is_symlink():  # (as `rglob`: a linked folder is not walked)
                    found += _modules(root, rel)
            elif entry.name.endswith(".py"):
                found.append(rel)
    return found
