"""`dpe://` URIs: parse with every validation rule of SPEC §2, and format.

    dpe://{host}/{doc_ref}[/pages/{N} | /elements/{ID}][?query]

Level 0 is the catalog (`dpe://host`), 1 a document, 2 a page, 3 an element. A URI that
breaks a rule raises `InvalidUri` (dpe code 4204) naming the rule. Unknown parameters, and
parameters at a level they do not apply to, are ignored; a duplicated parameter is an error.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Literal, cast
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit

from dpe_server.model.errors import DocumentNotFound, InvalidUri
from dpe_server.model.integers import MAX_DIGITS, TooLarge, parse_uint
from dpe_server.model.tree import Category, parse_element_id

Level = Literal[0, 1, 2, 3]
Output = Literal["json", "markdown", "text"]
"""What `format=` asks a body to be written in (not a file format: `extractors.Format`)."""
Depth = Literal["metadata", "pages"]

OUTPUTS: tuple[Output, ...] = ("json", "markdown", "text")
DEPTHS: tuple[Depth, ...] = ("metadata", "pages")
DEFAULT_LIMIT = 20
MAX_LIMIT = 100

_CATEGORY_NAMES = frozenset(c.value for c in Category)


@dataclass(frozen=True, slots=True)
class Param:
    """A query parameter: the levels that read it (SPEC §2; ignored at the others) and how its
    value is read, `read(uri, value)` (value None: not given; raises `InvalidUri`)."""

    levels: frozenset[Level]
    read: Callable[[str, str | None], Hashable]


@dataclass(frozen=True, slots=True)
class DpeUri:
    """A parsed, validated dpe URI: its level, its path, and the value of every query
    parameter its level reads (its default when the URI does not give it)."""

    raw: str
    host: str
    level: Level
    doc_ref: str | None = None
    page_index: int | None = None
    element_id: str | None = None
    params: tuple[tuple[str, Hashable], ...] = ()
    """`(name, value)` of each parameter of `PARAMS` that applies at `level`, in its order."""

    def param(self, name: str) -> Hashable:
        """The value of a query parameter (its default where this level does not read it)."""
        for given, value in self.params:
            if given == name:
                return value
        return PARAMS[name].read(self.raw, None)

    @property
    def shape(self) -> tuple[Hashable, ...]:
        """What the URI says of the body a read of it returns: its level, path and every
        parameter its level reads. Two URIs of one shape read from one version of a file get
        one body (`reader.Reader` shares big bodies under it); neither the spelling (`raw`:
        the order of parameters, a default given or not) nor `host` (one per server, and
        compared case-insensitively) changes a body."""
        return (self.level, self.doc_ref, self.page_index, self.element_id, self.params)

    @property
    def format(self) -> Output:
        return cast(Output, self.param("format"))

    @property
    def depth(self) -> Depth:
        return cast(Depth, self.param("depth"))

    @property
    def offset(self) -> int | None:
        return cast(int | None, self.param("offset"))

    @property
    def limit(self) -> int | None:
        return cast(int | None, self.param("limit"))

    @property
    def categories(self) -> frozenset[Category] | None:
        return cast(frozenset[Category] | None, self.param("categories"))


def parse(uri: str) -> DpeUri:
    """Parse and validate `uri`; raise `InvalidUri` naming the broken rule."""
    try:
        parts = urlsplit(uri)
    except ValueError as exc:
        raise InvalidUri(uri, "syntax", f"it is not a URI ({exc})") from None
    if parts.scheme.lower() != "dpe":
        got = f"'{parts.scheme}'" if parts.scheme else "none"
        raise InvalidUri(uri, "scheme", f"the scheme must be 'dpe', got {got}")
    host = parts.netloc
    if not host:
        raise InvalidUri(uri, "host", "the host must not be empty")

    doc_ref, page_index, element_id = _parse_path(uri, parts.path)
    level: Level = 0 if doc_ref is None else 2 if page_index is not None else 3 if element_id else 1
    given = _parse_query(uri, parts.query)
    params = tuple(
        (name, param.read(uri, given.get(name)))
        for name, param in PARAMS.items()
        if level in param.levels
    )
    return DpeUri(uri, host, level, doc_ref, page_index, element_id, params)


def check_host(uri: DpeUri, host: str) -> None:
    """Refuse a URI naming another server than `host` (hosts compare case-insensitively)."""
    if uri.host.lower() != host.lower():
        raise DocumentNotFound(f"Unknown host '{uri.host}': this server is dpe://{host}.", uri.raw)


def _parse_path(uri: str, path: str) -> tuple[str | None, int | None, str | None]:
    if path in ("", "/"):
        return None, None, None
    segments = path[1:].split("/")
    if segments[-1] == "" and len(segments) == 2:
        segments = segments[:1]  # a trailing slash after doc_ref is tolerated
    doc_ref = unquote(segments[0])
    if not doc_ref:
        raise InvalidUri(uri, "doc_ref", "the doc_ref must not be empty")
    if len(segments) == 1:
        return doc_ref, None, None
    if len(segments) == 3 and segments[1] == "pages":
        try:
            return doc_ref, parse_uint(segments[2]), None
        except TooLarge:
            raise InvalidUri(
                uri, "sub-path", f"pages/{{N}} is too large to be a page index ({_AT_MOST})"
            ) from None
        except ValueError:
            raise InvalidUri(
                uri,
                "sub-path",
                f"pages/{{N}} needs a non-negative integer, got '{_clip(segments[2])}'",
            ) from None
    if len(segments) == 3 and segments[1] == "elements":
        element_id = unquote(segments[2])
        if not element_id:
            raise InvalidUri(uri, "sub-path", "elements/{ID} needs a non-empty element id")
        try:
            parse_element_id(element_id)
        except TooLarge:
            raise InvalidUri(
                uri, "sub-path", f"the element id's numbers are too large to name one ({_AT_MOST})"
            ) from None
        return doc_ref, None, element_id
    rest = "/".join(segments[1:])
    raise InvalidUri(
        uri, "sub-path", f"the sub-path must be pages/{{N}} or elements/{{ID}}, got '{rest}'"
    )


def _parse_query(uri: str, query: str) -> dict[str, str]:
    params: dict[str, str] = {}
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=False)
    except ValueError as exc:
        raise InvalidUri(uri, "query", f"the query string cannot be read ({exc})") from None
    for key, value in pairs:
        if key in params:
            raise InvalidUri(uri, "duplicate", f"the parameter '{key}' is given more than once")
        params[key] = value
    return params


def _output(uri: str, value: str | None) -> Output:
    if value is None:
        return "json"
    for fmt in OUTPUTS:
        if value == fmt:
            return fmt
    raise InvalidUri(uri, "format", f"format must be json, markdown or text, got '{value}'")


def _depth(uri: str, value: str | None) -> Depth:
    if value is None:
        return "metadata"
    for depth in DEPTHS:
        if value == depth:
            return depth
    raise InvalidUri(uri, "depth", f"depth must be metadata or pages, got '{value}'")


def _offset(uri: str, value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return parse_uint(value)
    except TooLarge:
        raise InvalidUri(uri, "offset", f"offset is too large ({_AT_MOST})") from None
    except ValueError:
        raise InvalidUri(
            uri, "offset", f"offset must be a non-negative integer, got '{_clip(value)}'"
        ) from None


def _limit(uri: str, value: str | None) -> int | None:
    if value is None:
        return None
    try:
        limit = parse_uint(value)
    except ValueError:
        limit = 0
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidUri(
            uri, "limit", f"limit must be an integer from 1 to {MAX_LIMIT}, got '{_clip(value)}'"
        )
    return limit


_CLIP = 40
_AT_MOST = f"at most {MAX_DIGITS} digits"


def _clip(value: str) -> str:
    """A value quoted in a reason, cut short: a hostile URI may be a megabyte long."""
    return value if len(value) <= _CLIP else value[: _CLIP - 1] + "…"


def _categories(uri: str, value: str | None) -> frozenset[Category] | None:
    if value is None:
        return None
    items = [item.strip() for item in value.split(",")]
    if any(not item for item in items):
        raise InvalidUri(uri, "categories", "categories must not contain an empty item")
    unknown = [item for item in items if item not in _CATEGORY_NAMES]
    if unknown:
        raise InvalidUri(
            uri,
            "categories",
            f"'{unknown[0]}' is not an element category"
            f" (one of {', '.join(sorted(_CATEGORY_NAMES))})",
        )
    return frozenset(Category(item) for item in items)


PARAMS: dict[str, Param] = {
    "format": Param(frozenset({0, 1, 2, 3}), _output),
    "depth": Param(frozenset({1}), _depth),
    "offset": Param(frozenset({0, 1}), _offset),
    "limit": Param(frozenset({0, 1}), _limit),
    "categories": Param(frozenset({2}), _categories),
}
"""Every query parameter (SPEC §2), by name. A parameter added here is read at its levels and
is part of `DpeUri.shape`: no body of another value of it is served for it."""


def quote_segment(value: str) -> str:
    """Percent-encode one path segment (a doc_ref or element id); `parse` decodes it."""
    return quote(value, safe="")


def format_uri(
    host: str,
    doc_ref: str | None = None,
    *,
    page_index: int | None = None,
    element_id: str | None = None,
    query: dict[str, str] | None = None,
) -> str:
    """Build a dpe URI; query parameters are appended in the order given."""
    uri = f"dpe://{host}"
    if doc_ref is not None:
        uri += "/" + quote_segment(doc_ref)
        if page_index is not None:
            uri += f"/pages/{page_index}"
        elif element_id is not None:
            uri += "/elements/" + quote_segment(element_id)
    if query:
        uri += "?" + urlencode(query)
    return uri
