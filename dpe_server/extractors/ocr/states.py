"""What a page says of its recognition (`metadata.ocr`), and the two states the server moves a
page between: `pending` (to be recognised by a job of its own) and `failed` (that job failed:
timed out, crashed, out of memory, or the page could not be rendered; `ocr_error` says why).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from dpe_server.model.tree import JSON, Page

PENDING = "pending"
FAILED = "failed"


def is_pending(metadata: Mapping[str, JSON]) -> bool:
    return metadata.get("ocr") == PENDING


def failure(kind: str, message: str) -> dict[str, JSON]:
    """The page metadata of a failed recognition."""
    return {"ocr": FAILED, "ocr_error": {"kind": kind, "message": message}}


def failed(page: Page, kind: str, message: str) -> Page:
    """`page` (as served while pending) saying its recognition failed, and why."""
    return dataclasses.replace(page, metadata={**page.metadata, **failure(kind, message)})
