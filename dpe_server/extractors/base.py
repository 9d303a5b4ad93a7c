"""What every format offers and honours: its entry points (`Extractor`), the caps on an
extraction (`Limits`), and the one object that says everything else of a format (`Format`)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import BinaryIO

from dpe_server.model.tree import JSON, Document, Page, Properties


@dataclass(frozen=True, slots=True)
class Limits:
    """Caps every extraction honours (where one stops it, the output says `truncated`), and
    the OCR settings."""

    max_pages: int = 2_000
    """Pages (sheets, slides, pdf pages, docx sections) extracted at most."""
    max_cells: int = 2_000_000
    """Spreadsheet cells read at most, over the whole workbook."""
    max_elements_per_page: int = 5_000
    """Elements on one page at most."""
    max_chars_per_page: int = 16_000_000
    """Characters of text on one page at most."""
    max_part_bytes: int = 256 * 1024 * 1024
    """Inflated size of one zip member (OOXML part) at most."""
    max_total_inflated: int = 1024 * 1024 * 1024
    """Inflated bytes of all the parts read from one package at most."""
    max_members: int = 10_000
    """Zip members in one OOXML package at most."""
    max_ratio: float = 200.0
    """Compression ratio (inflated / compressed) of one member at most, for members > 1 MiB."""
    ocr: str = "auto"
    """Which pages that are pictures are recognised: auto, off, force (`extractors.ocr`)."""
    ocr_languages: tuple[str, ...] = ()
    """Languages OCR reads (`--ocr-languages`; none: every one the engine has)."""
    ocr_engine: str = "auto"
    """The OCR engine (`--ocr-engine`): auto, tesseract, rapidocr (`extractors.ocr`)."""
    keep_location: bool = False
    """A photo's GPS position is kept in its metadata (`--keep-location`); private otherwise."""
    picture_seconds: float = 15.0
    """Seconds one extraction (a document, or the job recognising one page) spends recognising
    the pictures of office files at most (pictures after that say `ocr: "skipped"`): a quarter
    of `--timeout`, so a page of many photos fits its job's deadline."""
    ocr_later: bool = False
    """Pdf pages and office pictures to recognise are not recognised now but say
    `ocr: "pending"` (the server's extraction jobs: each such page is then recognised by a job
    of its own, `jobs` op `ocr`)."""


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True, slots=True)
class Extractor:
    """A format's entry points. What else is known of the format is its `Format`'s; the cache
    key changes with the code that makes trees (`registry.extractor_fingerprint`)."""

    probe: Callable[[BinaryIO, Limits], Properties]
    extract: Callable[[BinaryIO, Limits], Document]
    extract_pages: Callable[[BinaryIO, Sequence[int], Limits], list[Page]] | None = None


Check = Callable[[BinaryIO, str, str, Limits], None]
"""`check(f, file_type, kind, limits)`: raise the project's error when `f` (whose first bytes
`magic.sniff` calls `kind`: zip, pdf, cfb, other) is not a plausible file of the format."""
Picture = Callable[[BinaryIO, str, Mapping[str, JSON], int], bytes | None]
"""`picture(f, file_type, metadata, max_bytes)`: the bytes of the picture an image element's
metadata names, or None (also when it is over `max_bytes`)."""
Member = Callable[[BinaryIO, str, Limits], bytes]
"""`member(f, path, limits)`: the bytes of the document at `path` inside `f` (an attachment,
an archive member, an embedded file: a child, docs/children.md), read under the limits;
KeyError when there is none, else the project's error when it cannot be read."""
Members = Callable[[BinaryIO, Sequence[str], Limits], Iterator[tuple[str, Callable[[], bytes]]]]
"""`members(f, paths, limits)`: each of `paths` with how to read its bytes (as `Member` reads
one), `f` opened once for them all (a batch of children: docs/children.md)."""
Embedded = Callable[[BinaryIO, Limits], list[JSON]]
"""`embedded(f, limits)`: the documents embedded in `f` that its extractor does not list
(`{path, name, mime_type, size}` each): the job lists them as the tree's children."""


@dataclass(frozen=True, slots=True)
class Format:
    """Everything the server knows of one file format, in one place: the catalog, the checks
    before parsing, the picture reader and the cache ask this object, never the format's name.

    Cheap to import: the extractor itself (and its library) is imported on first use.
    """

    name: str
    suffixes: tuple[str, ...]
    """Lower-case suffixes with their dot; `file_type` is the suffix without it."""
    kind_name: str
    """What a file of it is, in words (`an Excel workbook`), for messages."""
    page_unit: str
    """What a page of it is called (sheet, page, slide, section)."""
    paged: bool
    """Its extractor reads one page without the others (`Extractor.extract_pages`)."""
    extractor: str
    """`module:attribute` of its `Extractor` (entry points: probe, extract, extract_pages)."""
    check: Check | None = None
    """Checks of its container before its extractor runs (None: none beyond a non-empty file)."""
    picture: Picture | None = None
    """How a picture's bytes are read for a Level 3 image read (None: its images have none)."""
    pictures_beside: bool = False
    """Its image elements may name a picture file beside the document, by a path relative to
    it in `metadata.file` (a Markdown `![alt](pic.png)`): a Level 3 read serves that file's
    bytes, opened confined to the served folder (`isolation.pictures`), never the format."""
    member: Member | None = None
    """How a document inside one of its files (a child its tree lists in `metadata.children`)
    is read (None: its files hold none)."""
    members: Members | None = None
    """`member` for many documents of one file, opening it once (None: `member` each)."""
    embedded: Embedded | None = None
    """The documents embedded in one of its files, for formats whose extractor does not list
    them itself (a pdf's attached files, an Office package's embedded packages)."""
    package_prefix: str | None = None
    """For an OOXML format, the folder its package keeps its parts in (`xl/`)."""
    tools: tuple[str, ...] = ()
    """Programs on PATH its extractor runs (`soffice`): whether each is found is part of the
    cache key, so installing or removing one re-reads the files of the format."""
    recognises_pictures: bool = True
    """Its extractor may run OCR (a scanned page, a picture, a picture inside the file), so the
    OCR settings and the engine installed are part of its files' cache keys. False where the
    extractor never does (web pages, text, e-books, OpenDocument, mail, archives: a document
    inside one is keyed by its own format): a read of such a file never asks which engine is
    installed (`catalog.index.Index._fingerprint_of`)."""
    pdf_export: bool = False
    """LibreOffice exports its files to PDF (`kit.soffice.export_pdf`, as its `page_unit`
    says): `dpe-server view` draws its pages from that export."""
    probe_reads_whole: bool = False
    """Its probe reads the whole file (a conversion, which the extraction then reuses), so a
    probe runs under the extraction's deadline: the probe's shorter one would cut a
    conversion the full read finishes."""

    def load(self) -> Extractor:
        """Its extractor, importing its module (and its library) on first use."""
        module, _, attribute = self.extractor.partition(":")
        loaded: Extractor = getattr(importlib.import_module(module), attribute)
        return loaded
