"""What a page says of its recognition (`metadata.ocr`), and the two states the server moves a
page between: `pending` (to be recognised by a job of its own) and `failed` (that job failed:
timed out, crashed, or the page could not be rendered; `ocr_error` says why). A job that ran out
of memory leaves its page pending: the worker's fault, not the page's (`isolation.workers`).

A picture inside a docx, pptx or xlsx says its own state in its element's metadata (the same
values, and `skipped`); its page says `pending` while one of its pictures is (`with_pictures`),
so that the server sees the page to recognise as it sees a pdf page's.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable, Mapping

from dpe_server.extractors.ocr.settings import chosen
from dpe_server.model.info import PageInfo
from dpe_server.model.tree import JSON, Page

PENDING = "pending"
FAILED = "failed"
UNAVAILABLE = "unavailable"


@functools.cache
def installed(engine: str = "auto") -> bool:
    """Whether an engine `--ocr-engine` accepts is installed (cheap: the command or the
    extra's distribution is looked for, the engine is not loaded)."""
    return bool(chosen(engine))


def later(engine: str = "auto") -> str:
    """The state of what is to be recognised by a job of its own: `pending`, or `unavailable`
    without an engine (which no later job would change)."""
    return PENDING if installed(engine) else UNAVAILABLE


def is_pending(metadata: Mapping[str, JSON]) -> bool:
    return metadata.get("ocr") == PENDING


def pending_pages(pages: Iterable[PageInfo | Page]) -> list[int]:
    """The indices of the pages (of an extracted document, or listed in a stored outline) left
    to recognise."""
    return [p.page_index for p in pages if is_pending(p.metadata)]


def failure(kind: str, message: str) -> dict[str, JSON]:
    """The page metadata of a failed recognition."""
    return {"ocr": FAILED, "ocr_error": {"kind": kind, "message": message}}


def failed(page: Page, kind: str, message: str) -> Page:
    """`page` (as served while pending) saying its recognition failed, and why; its pictures
    that were pending say `failed` too."""
    elements = tuple(
        dataclasses.replace(e, metadata={**e.metadata, "ocr": FAILED})
        if is_pending(e.metadata)
        else e
        for e in page.elements
    )
    meta = {**page.metadata, **failure(kind, message)}
    return dataclasses.replace(page, elements=elements, metadata=meta)


def with_pictures(page: Page) -> Page:
    """`page` saying `ocr: "pending"` when one of its pictures is, `ocr: true` when one was
    recognised (a page of a format whose pictures are recognised one by one)."""
    states = [e.metadata.get("ocr") for e in page.elements]
    state: JSON = PENDING if PENDING in states else True if any(s is True for s in states) else None
    if state is None or page.metadata.get("ocr") == state:
        return page
    return dataclasses.replace(page, metadata={**page.metadata, "ocr": state})
