"""Pictures named by a path beside the document (a Markdown note's `![](docs/pic.png)`, a
saved web page's `page_files/image001.png`): such an image element names the file in
`metadata.file`, which a Level 3 read serves from the served folder, confined to it
(`isolation.pictures`, for a format whose `Format.pictures_beside` says so); a URL with a
scheme (remote, `data:`, `file:`) or an absolute path stays a `url`, never fetched."""

from __future__ import annotations

import dataclasses
import re
from urllib.parse import unquote

from dpe_server.model.tree import Category, Document, Element

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def beside(src: str) -> str | None:
    """The path relative to the document of a picture's `src` naming a file beside it (its
    `%`-escapes decoded, its query and fragment dropped), or None: a URL with a scheme
    (remote, `data:`, `file:`), an absolute path, or none at all."""
    path = unquote(src.split("#", 1)[0].split("?", 1)[0])
    if not path or _SCHEME.match(path) or path[0] in "/\\" or "\0" in path or "\\" in path:
        return None
    return path


def _served(el: Element) -> Element:
    url = el.metadata.get("url")
    path = beside(url) if el.category is Category.IMAGE and isinstance(url, str) else None
    if path is None:
        return el
    metadata = {k: v for k, v in el.metadata.items() if k != "url"}
    return dataclasses.replace(el, metadata={**metadata, "file": path})


def with_files(doc: Document) -> Document:
    """`doc` with every image whose `url` is a path beside the document naming it in
    `metadata.file` instead."""
    image = Category.IMAGE  # (asked first: `_served` changes a picture only)
    pages = tuple(
        dataclasses.replace(
            page,
            elements=tuple(_served(el) if el.category is image else el for el in page.elements),
        )
        for page in doc.pages
    )
    return dataclasses.replace(doc, pages=pages)
