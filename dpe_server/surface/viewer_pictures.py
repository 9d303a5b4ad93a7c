"""The pictures of `dpe-server view`'s pages: a pdf page drawn by PDFium; an office page
(docx, xlsx, pptx, OpenDocument, legacy: `Format.pdf_export`) drawn from the pdf LibreOffice
exports the file to, when LibreOffice is installed.

The export is an `export` job (in a worker, LibreOffice in its sandbox: no network, no link
followed, its own deadline), run once per version of a document (its store key) and kept in
the server's cache folder (`view-exports/`, the newest version of each document only, deleted
once unused for `UNUSED_DAYS`; a private temporary folder with `--no-cache`), never beside the
user's files. Its pages are
then drawn as a pdf's are, by an `image` job on the exported file.

Which pdf page is the document's page N:
- a slide (pptx, odp, ppt): the Nth pdf page (hidden slides are exported too);
- a sheet (xlsx, ods, xls...): each sheet is exported on one pdf page as large as the sheet;
  hidden sheets too by some LibreOffice versions (7.4), not by others: the Nth pdf page when
  the export has a page for every sheet, else the page counting the sheets shown before it
  (a hidden sheet then has no picture);
- a section (docx, odt, doc, rtf): a page of the tree runs from one top-level heading to the
  next, over one printed page or several, so the printed page where it begins: the pdf page
  holding its first text, each page's first text looked for after the one before's.
Office trees carry no element boxes (no bboxes: only pdf pages and pictures' recognised
words do), so an office page is its picture with the tree beside it.
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import hashlib
import logging
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from dpe_server.catalog.sqlite import default_cache_dir
from dpe_server.extractors import format_of
from dpe_server.extractors.kit.soffice import installed
from dpe_server.model.errors import ExtractionError
from dpe_server.model.uri import MAX_LIMIT, format_uri
from dpe_server.surface.app import DpeApp

log = logging.getLogger(__name__)

FOLDER = "view-exports"
UNUSED_DAYS = 30
"""An export no viewer drew a page from for this long is deleted (a document removed from
its folder, or the folder no longer viewed)."""
TEXT_CATEGORIES = ("heading", "text")
"""The elements whose text finds a section's printed page (not headers, footers or notes,
which LibreOffice prints elsewhere or on every page)."""


def first_text(page: dict[str, Any]) -> str:
    """The text of a Level 2 page's first heading or paragraph ("" when it has none)."""
    for element in page.get("elements", []):
        content = element.get("content")
        if element.get("category") in TEXT_CATEGORIES and isinstance(content, dict):
            text = content.get("text")
            if isinstance(text, str) and text.strip():
                return text
    return ""


def sheet_page(pages: list[dict[str, Any]], index: int, sheets: int) -> dict[str, Any]:
    """Where sheet `index` of a workbook of `sheets` sheets is in its export, given the
    Level 1 entries of its sheets up to it: LibreOffice puts each sheet on a page of its own,
    hidden ones too in some versions (7.4 does) and not in others; which one the export did,
    the worker drawing it sees from its page count (`sheets`): page `index` when every sheet
    is there, else the page counting the sheets shown before it (`shown_page`; -1 for a
    hidden sheet: none)."""
    hidden = index < len(pages) and bool(pages[index].get("hidden"))
    shown = -1 if hidden else sum(1 for p in pages[:index] if not p.get("hidden"))
    return {"rendered_page": index, "sheets": sheets, "shown_page": shown}


class NoPicture(Exception):
    """Why a page has no picture, in a sentence for the page."""


class Pictures:
    """The pictures of one viewer's pages, over its app's catalog, reader and workers."""

    def __init__(self, app: DpeApp) -> None:
        self.app = app
        self._folder: Path | None = None
        self._turns: dict[str, anyio.Lock] = {}
        self._failed: dict[str, str] = {}
        """Why a version could not be exported (its key): not tried again until it changes."""

    def drawn(self, file_type: str, rel: str) -> str:
        """ "" when a page of this file has a picture; else why not, in a sentence."""
        if file_type == "pdf":
            return ""
        fmt = format_of(rel)
        if fmt is None or not fmt.pdf_export:
            return f"Pages of .{file_type} files are shown as their tree alone."
        if not installed():
            return (
                "No picture: drawing office pages needs LibreOffice (the `soffice` command; on "
                "Debian or Ubuntu the libreoffice-writer-nogui, -calc-nogui and -impress-nogui "
                "packages). The tree alone is shown."
            )
        return ""

    async def picture(self, ref: str, index: int) -> tuple[bytes, str]:
        """Page `index` of document `ref` as (PNG bytes, mime type); `NoPicture` saying why
        when it has none."""
        entry = self.app.catalog.entry(ref)  # a doc_ref of the catalog, never a path
        why = self.drawn(entry.file_type, entry.rel)
        if why:
            raise NoPicture(why)
        if entry.file_type == "pdf":
            found = await self.app.backend.image(
                self.app.catalog.root, entry.rel, {"rendered_page": index}
            )
        else:
            pdf = await self._export(entry.doc_ref, entry.rel, entry.key)
            metadata = await self.page_of(ref, entry.rel, index)
            found = await self.app.backend.image(pdf.parent, pdf.name, metadata)
        if found is None:
            raise NoPicture("This page could not be drawn.")
        return base64.b64decode(found[0]), found[1]

    async def page_of(self, ref: str, rel: str, index: int) -> dict[str, Any]:
        """Which page of the export is page `index` (the module's docstring)."""
        fmt = format_of(rel)
        unit = fmt.page_unit if fmt is not None else ""
        if unit == "sheet":
            catalog = self.app.catalog
            sheets = max(catalog.page_count(catalog.entry(ref)), index + 1)
            return sheet_page(await self._pages(ref, index + 1), index, sheets)
        if unit == "section":
            texts = [
                first_text(await self._json(format_uri(self.app.host, ref, page_index=i)))
                for i in range(index + 1)
            ]
            if not texts[-1]:
                raise NoPicture("This section has no text to find its printed page by.")
            return {"rendered_page": 0, "page_texts": texts}
        return {"rendered_page": index}

    async def _pages(self, ref: str, count: int) -> list[dict[str, Any]]:
        """The first `count` entries of a document's Level 1 pages (read 100 at a time)."""
        pages: list[dict[str, Any]] = []
        while len(pages) < count:
            query = f"?depth=pages&offset={len(pages)}&limit={MAX_LIMIT}"
            more = (await self._json(format_uri(self.app.host, ref) + query)).get("pages", [])
            if not more:
                break
            pages += more
        return pages[:count]

    async def _json(self, uri: str) -> Any:
        import json

        bodies = await self.app.reader.read(uri)
        return json.loads(bodies[0].text or "null")

    async def _export(self, doc_ref: str, rel: str, key: str) -> Path:
        """The export of this version of the document, made once."""
        folder = await anyio.to_thread.run_sync(self.folder)
        stem = hashlib.sha256(doc_ref.encode()).hexdigest()[:16]
        path = folder / f"{stem}-{hashlib.sha256(key.encode()).hexdigest()[:24]}.pdf"
        async with self._turns.setdefault(stem, anyio.Lock()):
            if key in self._failed:
                raise NoPicture(self._failed[key])
            if path.is_file():
                await anyio.to_thread.run_sync(os.utime, path)  # used: kept (`UNUSED_DAYS`)
                return path
            try:
                data = base64.b64decode(await self.app.backend.export(self.app.catalog.root, rel))
            except ExtractionError as exc:
                self._failed[key] = exc.message
                raise NoPicture(self._failed[key]) from exc
            await anyio.to_thread.run_sync(_keep, folder, stem, path, data)
            return path

    def folder(self) -> Path:
        """Where exports are kept: the cache folder's `view-exports/`, else (no cache, or a
        cache folder inside the served one) a private temporary folder."""
        if self._folder is None:
            settings = self.app.settings
            base = (settings.cache_dir or default_cache_dir()).expanduser().resolve()
            root = self.app.catalog.root
            inside = base == root or base.is_relative_to(root)
            try:
                if settings.cache and not inside:
                    (base / FOLDER).mkdir(parents=True, exist_ok=True)
                    self._folder = base / FOLDER
                    _remove_unused(self._folder, time.time() - UNUSED_DAYS * 86_400)
            except OSError as exc:
                log.warning("no exports in %s (%s): a temporary folder instead", base, exc)
            if self._folder is None:
                self._folder = Path(tempfile.mkdtemp(prefix="dpe-view-exports-"))
                atexit.register(shutil.rmtree, self._folder, True)
        return self._folder


def _remove_unused(folder: Path, unused_since: float) -> None:
    for path in folder.glob("*.pdf"):
        with contextlib.suppress(OSError):
            if path.stat().st_mtime < unused_since:
                path.unlink()


def _keep(folder: Path, stem: str, path: Path, data: bytes) -> None:
    """Write the export (whole, then renamed into place) and remove the document's older ones."""
    partial = path.with_suffix(".partial")
    partial.write_bytes(data)
    partial.replace(path)
    for old in folder.glob(f"{stem}-*.pdf"):
        if old != path:
            old.unlink(missing_ok=True)
