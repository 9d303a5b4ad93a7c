"""Documents inside documents, as the catalog serves them (docs/children.md): what an outline
lists of its children, the stat a child is keyed by, and the links of its container's pages
pointed at it. The index (`index.Index`) holds the children as entries of their own."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from dpe_server.catalog.folder import FileStat, is_ignored
from dpe_server.catalog.store import Outline
from dpe_server.extractors import is_supported
from dpe_server.model import children
from dpe_server.model.tree import Category, Page

CHILD_KINDS = frozenset({"attachment", "member", "embedded"})
"""The `kind` of a link element naming a document inside its page's document."""


def listed(rel: str, outline: Outline | None) -> dict[str, int]:
    """The children an outline of the document at `rel` lists that the catalog serves (a
    kind the registry reads, not a temporary or hidden name, `MAX_DEPTH` deep at most), by
    relative path, with their sizes."""
    if outline is None or children.depth(rel) >= children.MAX_DEPTH:
        return {}
    found: dict[str, int] = {}
    for child in outline.metadata.get("children") or ():
        path = str(child.get("path") or "") if isinstance(child, dict) else ""
        if path and "\0" not in path and is_supported(path) and not is_ignored(path):
            size = child.get("size")
            found[children.child_rel(rel, path)] = size if isinstance(size, int) else 0
    return found


def child_stat(container: FileStat, size: int) -> FileStat:
    """A child's stat: its container's times and inode, its own size."""
    return dataclasses.replace(container, size=size)


def linked(page: Page, url_of: Callable[[str], str]) -> Page:
    """`page` with each link to a document inside its document pointing at `url_of(path)`."""
    elements = list(page.elements)
    changed = False
    for i, el in enumerate(elements):
        if el.category is not Category.LINK or el.content.get("kind") not in CHILD_KINDS:
            continue
        path = str(el.metadata.get("child") or el.content.get("name") or "")
        url = url_of(path)
        if url != el.content.get("url"):
            elements[i] = dataclasses.replace(el, content={**el.content, "url": url})
            changed = True
    return dataclasses.replace(page, elements=tuple(elements)) if changed else page
