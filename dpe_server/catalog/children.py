"""Documents inside documents, as the catalog serves them (docs/children.md): what an outline
lists of its children, the stat a child is keyed by, and the links of its container's pages
pointed at it. The index (`index.Index`) holds the children as entries of their own."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

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
    if outline is None:
        return {}
    found: dict[str, int] = {}
    for child in outline.metadata.get("children") or ():
        path = str(child.get("path") or "") if isinstance(child, dict) else ""
        if servable(rel, path):
            size = child.get("size")
            found[children.child_rel(rel, path)] = size if isinstance(size, int) else 0
    return found


def servable(rel: str, path: str) -> bool:
    """Whether the document at `path` inside the one at `rel` is served as a document once
    its container's tree lists it."""
    return (
        children.depth(rel) < children.MAX_DEPTH
        and bool(path)
        and "\0" not in path
        and is_supported(path)
        and not is_ignored(path)
    )


class _Listed(Protocol):
    rel: str
    stat: FileStat


E = TypeVar("E", bound=_Listed)

BATCH_CHILDREN = 100
"""Children extracted in one job at most (`batches`)."""
BATCH_CHILD_BYTES = 1024 * 1024
"""A child larger than this is extracted in a job of its own: a batch saves the cost of a
job, which only small documents notice."""
BATCH_BYTES = 16 * 1024 * 1024
"""The children of one batch together at most."""


def batches(entries: Sequence[E]) -> list[list[E]]:
    """The small children among `entries` (files and children, in the order they are to be
    extracted), by container, in batches of at least two: each is extracted in one job that
    opens its container once (docs/children.md)."""
    by_container: dict[str, list[list[E]]] = {}
    sizes: dict[str, int] = {}
    for entry in entries:
        size = entry.stat.size
        if not children.depth(entry.rel) or size > BATCH_CHILD_BYTES:
            continue
        container = children.container_of(entry.rel)
        groups = by_container.setdefault(container, [[]])
        if len(groups[-1]) >= BATCH_CHILDREN or sizes.get(container, 0) + size > BATCH_BYTES:
            groups.append([])
            sizes[container] = 0
        groups[-1].append(entry)
        sizes[container] = sizes.get(container, 0) + size
    return [g for groups in by_container.values() for g in groups if len(g) > 1]


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
