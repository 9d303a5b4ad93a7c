"""The read of one `dpe://` URI as steps, written once for both readers.

Everything a read decides on its way from the URI to its bodies is decided here, once: which
level it is (`DpeUri.level`), what is asked of the documents for it, that Level 0 in JSON is
written a batch of documents at a time, that only an image element read in JSON is followed
by its picture (a picture that cannot be read leaves the JSON standing), that only Level 3 is
cut to the size cap, which bodies are shared and under what key (the store key of the version
read with the URI's `shape`: every parameter that shapes a body, so a new one cannot be
forgotten), and the bodies with their MIME types (`bodies`, the one place a `Body` is made).
Level 1 shows its page index when `depth=pages` (`views.payloads.document_view` decides).

`read_plan` is a generator that yields what it needs done and receives the result, as
`catalog.steps` does for pages:

- `Listing`: the documents of the folder (Level 0);
- `Outlined`: a document's `DocumentInfo` and its pages' `PageInfo`s, its outline made current;
- `PageRead`: a page, with the store key of the version it is of;
- `ElementRead`: an element and its page index, with that store key;
- `PictureRead`: an image element's picture, `(base64 data, MIME type)` or None (an
  `ExtractionError` it raises goes back into the plan);
- `ListingJson`: Level 0 written as JSON (`views.listing`);
- `Render`: a payload rendered (`views.render.render_capped`), shared under `key` if not None.

`reader.Reader` performs them with `await` (renders off the event loop, shared, within a byte
budget), `oneshot.OneShotReader` of `dpe-server read` right away (`perform`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, assert_never

from dpe_server.model.errors import ExtractionError
from dpe_server.model.info import DocumentInfo
from dpe_server.model.tree import JSON, Category
from dpe_server.model.uri import DpeUri, Level, Output
from dpe_server.views.payloads import catalog_view, document_view, element_view, page_view
from dpe_server.views.render import MIME_TYPES, Body


@dataclass(frozen=True, slots=True)
class Listing:
    pass


@dataclass(frozen=True, slots=True)
class Outlined:
    doc_ref: str


@dataclass(frozen=True, slots=True)
class PageRead:
    doc_ref: str
    index: int


@dataclass(frozen=True, slots=True)
class ElementRead:
    doc_ref: str
    element_id: str


@dataclass(frozen=True, slots=True)
class PictureRead:
    doc_ref: str
    metadata: Mapping[str, JSON]


@dataclass(frozen=True, slots=True)
class ListingJson:
    docs: Sequence[DocumentInfo]
    uri: DpeUri


@dataclass(frozen=True, slots=True)
class Render:
    level: Level
    payload: dict[str, JSON]
    output: Output
    cap: int
    """Bytes of JSON past which the payload is cut (`element_cap`); 0: never."""
    key: Hashable | None
    """The key the body is shared under by concurrent reads (and kept when big); None: not
    shared (Levels 0 and 1 change with the folder, not with one file's version)."""


ReadStep = Listing | Outlined | PageRead | ElementRead | PictureRead | ListingJson | Render
ReadSteps = Generator[ReadStep, Any, list[Body]]


def read_plan(uri: DpeUri, host: str, max_element_bytes: int) -> ReadSteps:
    """The steps of a read of `uri` (its host already checked) on the server `host`; returns
    its bodies. A Level 3 element whose JSON passes `max_element_bytes` is cut (0: never)."""
    match uri.level:
        case 0:
            docs = yield Listing()
            if uri.format == "json":  # never the folder's summaries all at once
                text = yield ListingJson(docs, uri)
            else:
                text = yield Render(0, catalog_view(host, docs, uri), uri.format, 0, None)
            return bodies(uri, text)
        case 1:
            assert uri.doc_ref is not None
            info, pages = yield Outlined(uri.doc_ref)
            payload = document_view(host, info, pages, uri)
            return bodies(uri, (yield Render(1, payload, uri.format, 0, None)))
        case 2:
            assert uri.doc_ref is not None
            assert uri.page_index is not None
            key, page = yield PageRead(uri.doc_ref, uri.page_index)
            payload = page_view(host, uri.doc_ref, page, uri)
            return bodies(uri, (yield Render(2, payload, uri.format, 0, (key, uri.shape))))
        case 3:
            assert uri.doc_ref is not None
            assert uri.element_id is not None
            key, index, element = yield ElementRead(uri.doc_ref, uri.element_id)
            payload = element_view(host, uri.doc_ref, index, element)
            picture = None
            if uri.format == "json" and element.category is Category.IMAGE:
                try:
                    picture = yield PictureRead(uri.doc_ref, element.metadata)
                except ExtractionError:
                    picture = None  # the file changed or broke since: no picture, the JSON stands
            shared = (key, uri.shape)
            text = yield Render(3, payload, uri.format, max_element_bytes, shared)
            return bodies(uri, text, picture)
        case _:
            assert_never(uri.level)


def bodies(uri: DpeUri, text: str, picture: tuple[str, str] | None = None) -> list[Body]:
    """What a read of `uri` returns: its body in the format asked, then the picture
    `(base64 data, MIME type)` if any."""
    out = [Body(uri.raw, MIME_TYPES[uri.format], text=text)]
    if picture is not None:
        out.append(Body(uri.raw, picture[1], blob=picture[0]))
    return out


async def perform(steps: ReadSteps, step_done: Callable[[ReadStep], Awaitable[Any]]) -> list[Body]:
    """Perform every step of `steps` by `step_done` (an `ExtractionError` goes back into the
    plan); the bodies. The one-shot reader's `step_done` never suspends (`run_inline`)."""
    value: Any = None
    error: ExtractionError | None = None
    while True:
        try:
            step = steps.send(value) if error is None else steps.throw(error)
        except StopIteration as done:
            result: list[Body] = done.value
            return result
        try:
            value, error = await step_done(step), None
        except ExtractionError as exc:
            value, error = None, exc
