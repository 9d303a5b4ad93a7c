"""How a document inside another (an e-mail's attachment, an archive's member, a file
embedded in a pdf or an Office package: a child) is named (docs/children.md).

The catalog holds a child under a relative path of its own: its container's, then each path
inside, joined by NUL (`mail.msg\\0attachments/q3.xlsx`). No file's path can hold a NUL, so a
child's never names a file of the folder, nor a file's a child; the extraction job opens the
container and reads the child from it (`split`). Its `file_uri` is the container's with the
path as the fragment, nested paths joined by `!/` (`file:///…/mail.msg#attachments/q3.xlsx`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from dpe_server.model import summaries
from dpe_server.model.tree import JSON, Category, Element, Page, element_id

SEP = "\0"
MAX_DEPTH = 3
"""Children of children nest this deep at most: a container's children are depth 1."""
NEST = "!/"
"""Between the paths of a nested child in its `file_uri`'s fragment."""


def child_rel(container: str, path: str) -> str:
    """The relative path the catalog holds the child at `path` inside `container` under."""
    return f"{container}{SEP}{path}"


def split(rel: str) -> tuple[str, list[str]]:
    """The file a relative path is in, and the paths inside it down to the child (none: the
    path names a file)."""
    file_rel, *inner = rel.split(SEP)
    return file_rel, inner


def depth(rel: str) -> int:
    """0 for a file, 1 for a child of a file, 2 for a child of a child..."""
    return rel.count(SEP)


def container_of(rel: str) -> str:
    """The relative path of a child's container ("" for a file)."""
    return rel.rpartition(SEP)[0]


def path_in(rel: str) -> str:
    """A child's path inside its container ("" for a file)."""
    head, _, path = rel.rpartition(SEP)
    return path if head else ""


def name_of(rel: str) -> str:
    """The last name of a file's or a child's path (`q3.xlsx`)."""
    return rel.rstrip("/").rpartition(SEP)[2].rpartition("/")[2]


def fragment(rel: str) -> str:
    """A child's `file_uri` fragment, unquoted (its paths joined by `!/`); "" for a file."""
    return NEST.join(split(rel)[1])


def with_links(page: Page, listed: Sequence[Mapping[str, JSON]]) -> Page:
    """`page` with a link (`kind: attachment`: name, media type, size) to each child in
    `listed` (`{path, name, mime_type, size}` each) after its elements: the documents embedded
    in a pdf or an Office package, which their extractors leave out of the pages."""
    n = sum(1 for el in page.elements if el.category is Category.LINK)
    added: list[Element] = []
    for child in listed:
        path, name = str(child.get("path") or ""), str(child.get("name") or "")
        content: dict[str, JSON] = {"text": name, "url": path, "kind": "attachment"}
        content |= {"name": name, "mime_type": child.get("mime_type"), "size": child.get("size")}
        n += 1
        eid = element_id(page.page_index, Category.LINK, n)
        added.append(
            Element(eid, Category.LINK, summaries.link(name, path), content, {"child": path})
        )
    return dataclasses.replace(page, elements=(*page.elements, *added)) if added else page
