"""What Level 0 and Level 1 say of a document and of its pages, as the catalog keeps it: the
headers of a tree, without its bodies."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from dpe_server.model.tree import JSON, Page


@dataclass(frozen=True, slots=True)
class DocumentInfo:
    """What Level 0 and Level 1 say of one document (SPEC §4 DocumentSummary)."""

    doc_ref: str
    file_uri: str
    file_type: str
    title: str
    page_count: int
    keywords: tuple[str, ...]
    summary: str
    last_modified: str
    """ISO 8601 UTC with a `Z`."""
    error: Mapping[str, str] | None = None
    """`{kind, message}` when the file cannot be read."""
    extra: Mapping[str, JSON] = field(default_factory=dict)
    """Extension fields (`truncated`, `indexing`...)."""


@dataclass(frozen=True, slots=True)
class PageInfo:
    """What the Level 1 page index says of one page."""

    page_index: int
    title: str
    element_count: int
    metadata: Mapping[str, JSON] = field(default_factory=dict)

    @classmethod
    def of(cls, page: Page) -> PageInfo:
        return cls(page.page_index, page.title, len(page.elements), page.metadata)
