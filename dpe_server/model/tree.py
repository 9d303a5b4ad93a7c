"""The Document-Page-Element tree: small frozen dataclasses of plain data.

The tree turns into JSON and back without loss (`to_json` / `from_json`), which is what lets a
worker process hand a tree to the server, the cache store it and the goldens compare it.

An extractor builds pages with `PageBuilder`, which assigns element ids by the scheme of
SPEC §2 (`p{page}-{abbr}{n}`), so an element id always names its page.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from dpe_server.model.integers import TooLarge, parse_uint

JSON: TypeAlias = Any
"""A value that `json.dumps` accepts (dicts, lists, str, int, float, bool, None)."""


class Category(enum.StrEnum):
    """The 19 element categories of the DPE model, in the seed's order."""

    TEXT = "text"
    HEADING = "heading"
    LIST = "list"
    CODE = "code"
    TABLE = "table"
    PIVOT_TABLE = "pivot_table"
    CHART = "chart"
    DIAGRAM = "diagram"
    IMAGE = "image"
    FORMULA = "formula"
    LINK = "link"
    ANNOTATION = "annotation"
    HEADER = "header"
    FOOTER = "footer"
    SEPARATOR = "separator"
    AUDIO = "audio"
    VIDEO = "video"
    FORM = "form"
    WIDGET = "widget"

    @property
    def abbr(self) -> str:
        """The id abbreviation of SPEC §2 (`tbl` for table, ...)."""
        return _ABBR[self]


_ABBR: dict[Category, str] = {
    Category.TEXT: "txt",
    Category.HEADING: "h",
    Category.LIST: "lst",
    Category.CODE: "code",
    Category.TABLE: "tbl",
    Category.PIVOT_TABLE: "pvt",
    Category.CHART: "chart",
    Category.DIAGRAM: "dgm",
    Category.IMAGE: "img",
    Category.FORMULA: "fx",
    Category.LINK: "lnk",
    Category.ANNOTATION: "ann",
    Category.HEADER: "hdr",
    Category.FOOTER: "ftr",
    Category.SEPARATOR: "sep",
    Category.AUDIO: "aud",
    Category.VIDEO: "vid",
    Category.FORM: "form",
    Category.WIDGET: "wgt",
}
_BY_ABBR = {abbr: cat for cat, abbr in _ABBR.items()}

# Longest abbreviations first, so that `code` is not read as `c` + `ode` (none clash today).
_ID_RE = re.compile(
    r"p(?P<page>0|[1-9][0-9]*)-(?P<abbr>"
    + "|".join(sorted(_BY_ABBR, key=len, reverse=True))
    + r")(?P<n>[1-9][0-9]*)"
)

SUMMARY_MAX = 120
"""A summary is one line of at most this many characters (SPEC §4)."""

TABLE_PREVIEW_ROWS = 10
"""Rows of a table shown at Level 2; Level 3 gives them all."""

TABLE_BLOCK_ROWS = 500
"""Rows at most in one table element: larger blocks are split into row-block elements."""


def element_id(page_index: int, category: Category, n: int) -> str:
    """The id of the n-th (from 1) element of `category` on page `page_index`."""
    if page_index < 0 or n < 1:
        raise ValueError(f"no element id for page {page_index}, number {n}")
    return f"p{page_index}-{category.abbr}{n}"


@dataclass(frozen=True, slots=True)
class ElementIdParts:
    page_index: int
    category: Category
    n: int


def parse_element_id(value: str) -> ElementIdParts | None:
    """Split an id of this server's scheme; None when `value` is not of that scheme.

    Raises `integers.TooLarge` for an id of the scheme whose page or number has more digits
    than any page or element could (`p99999999999999999999-txt1`)."""
    m = _ID_RE.fullmatch(value)
    if m is None:
        return None
    return ElementIdParts(parse_uint(m["page"]), _BY_ABBR[m["abbr"]], parse_uint(m["n"]))


def page_of_element_id(value: str) -> int | None:
    """The page an element id names, or None for an id that names none this server has."""
    try:
        parts = parse_element_id(value)
    except TooLarge:
        return None
    return None if parts is None else parts.page_index


def one_line(text: str, limit: int = SUMMARY_MAX) -> str:
    """Collapse white space to single spaces and cut to `limit` characters with an ellipsis."""
    short = len(text) <= limit
    if short and text.isprintable() and "  " not in text and text[:1] != " " != text[-1:]:
        # one line already (every white space but " " is unprintable); most summaries are (an
        # extractor's, collapsed and cut by `one_line` before `PageBuilder.add`'s)
        return text
    if len(text) > 2 * limit:  # a long text: its start alone, when that is cut all the same
        head = " ".join(text[: 2 * limit].split())  # (a start of the whole text's words)
        if len(head) > limit:
            return head[: limit - 1].rstrip() + "…"
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    return flat[: limit - 1].rstrip() + "…"


@dataclass(frozen=True, slots=True)
class Element:
    """One content unit of a page. `content` follows SPEC §4 for its category."""

    element_id: str
    category: Category
    summary: str
    content: Mapping[str, JSON]
    metadata: Mapping[str, JSON] = field(default_factory=dict)

    def to_json(self) -> dict[str, JSON]:
        return {
            "element_id": self.element_id,
            "category": self.category._value_,  # `.value`, without the enum's property
            "summary": self.summary,
            "content": dict(self.content),
            "metadata": dict(self.metadata),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, JSON]) -> Element:
        return cls(
            element_id=data["element_id"],
            category=Category(data["category"]),
            summary=data["summary"],
            content=data["content"],
            metadata=data.get("metadata", {}),
        )


@dataclass(frozen=True, slots=True)
class Page:
    """One logical page: a sheet, a pdf page, a slide, a docx section.

    `metadata` holds page facts that views show as extension fields (`hidden`, `layout`...).
    """

    page_index: int
    title: str
    elements: tuple[Element, ...] = ()
    metadata: Mapping[str, JSON] = field(default_factory=dict)

    def element(self, element_id: str) -> Element | None:
        for el in self.elements:
            if el.element_id == element_id:
                return el
        return None

    def to_json(self) -> dict[str, JSON]:
        return {
            "page_index": self.page_index,
            "title": self.title,
            "elements": [el.to_json() for el in self.elements],
            "metadata": dict(self.metadata),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, JSON]) -> Page:
        return cls(
            page_index=data["page_index"],
            title=data["title"],
            elements=tuple(Element.from_json(e) for e in data["elements"]),
            metadata=data.get("metadata", {}),
        )


@dataclass(frozen=True, slots=True)
class Properties:
    """What a file says about itself, before any body is parsed (a cheap probe).

    `title`, `keywords`, `summary` are None / empty when the file does not say; the catalog
    then derives them from the content (`dpe_server.model.metadata`).
    """

    page_count: int
    title: str | None = None
    keywords: tuple[str, ...] = ()
    summary: str | None = None
    page_titles: tuple[str, ...] | None = None
    extra: Mapping[str, JSON] = field(default_factory=dict)

    def to_json(self) -> dict[str, JSON]:
        return {
            "page_count": self.page_count,
            "title": self.title,
            "keywords": list(self.keywords),
            "summary": self.summary,
            "page_titles": None if self.page_titles is None else list(self.page_titles),
            "extra": dict(self.extra),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, JSON]) -> Properties:
        titles = data.get("page_titles")
        return cls(
            page_count=data["page_count"],
            title=data.get("title"),
            keywords=tuple(data.get("keywords", ())),
            summary=data.get("summary"),
            page_titles=None if titles is None else tuple(titles),
            extra=data.get("extra", {}),
        )


@dataclass(frozen=True, slots=True)
class Document:
    """A whole extracted file: its properties and its pages, in order.

    `metadata` carries document facts beyond SPEC §4 (`truncated`, author...).
    """

    properties: Properties
    pages: tuple[Page, ...]
    metadata: Mapping[str, JSON] = field(default_factory=dict)

    def to_json(self) -> dict[str, JSON]:
        return {
            "properties": self.properties.to_json(),
            "pages": [p.to_json() for p in self.pages],
            "metadata": dict(self.metadata),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, JSON]) -> Document:
        return cls(
            properties=Properties.from_json(data["properties"]),
            pages=tuple(Page.from_json(p) for p in data["pages"]),
            metadata=data.get("metadata", {}),
        )


class PageBuilder:
    """Collects the elements of one page in order and numbers them per category.

    With `max_elements`, elements past the cap are dropped (`add` returns "") and the built
    page's metadata says `truncated`.

    >>> b = PageBuilder(0)
    >>> b.add(Category.TABLE, "Sales (4 rows, 3 columns)", {"headers": [], "rows": []})
    'p0-tbl1'
    """

    def __init__(self, page_index: int, max_elements: int | None = None) -> None:
        self.page_index = page_index
        self.max_elements = max_elements
        self.truncated = False
        """True once an element was dropped for the cap."""
        self._elements: list[Element] = []
        self._counts: dict[Category, int] = {}
        self._prefix = f"p{page_index}-" if page_index >= 0 else None
        """What every element id of the page begins with (None: no id, `element_id` says)."""

    def __len__(self) -> int:
        return len(self._elements)

    def next_id(self, category: Category) -> str:
        """The id the next element of `category` will get (for cross references)."""
        return element_id(self.page_index, category, self._counts.get(category, 0) + 1)

    def add(
        self,
        category: Category,
        summary: str,
        content: Mapping[str, JSON],
        metadata: Mapping[str, JSON] | None = None,
    ) -> str:
        return self.put(category, one_line(summary), dict(content), dict(metadata or {}))

    def put(
        self,
        category: Category,
        summary: str,
        content: Mapping[str, JSON],
        metadata: Mapping[str, JSON],
    ) -> str:
        """`add`, for an extractor whose `summary` is one line already (`one_line`'s own
        result: it is returned as it is) and whose `content` and `metadata` are dictionaries
        made for this element alone: kept as they are, not copied (a web page's 29,000
        elements)."""
        if self.max_elements is not None and len(self._elements) >= self.max_elements:
            self.truncated = True
            return ""
        n = self._counts.get(category, 0) + 1
        self._counts[category] = n
        if self._prefix is None:
            eid = element_id(self.page_index, category, n)
        else:  # element_id's, without its checks of a page index and count known good
            eid = f"{self._prefix}{_ABBR[category]}{n}"
        self._elements.append(Element(eid, category, summary, content, metadata))
        return eid

    def build(self, title: str, metadata: Mapping[str, JSON] | None = None) -> Page:
        meta = dict(metadata or {})
        if self.truncated:
            meta["truncated"] = True
        return Page(self.page_index, title, tuple(self._elements), meta)
