"""The extractors of .eml, .msg and .mbox: one page per message (`paths.flattened`: an
mbox's messages, a message's forwarded ones after it), its header fields the page's metadata
(the first subject the document's title), then its elements: the subject as a heading, the
header fields as text, the body (the HTML part through the registered HTML reader when there
is one, else the plain part, else the HTML part's text), `text/calendar` parts as text, the
pictures shown inline as images, and each attachment a link (`kind: attachment`) whose path
the document lists in `metadata.children`, so the catalog serves it as a document of its
own (docs/children.md)."""

from __future__ import annotations

import functools
import io
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import BinaryIO

from dpe_server.extractors.base import Extractor, Limits
from dpe_server.extractors.mail import html as html_text
from dpe_server.extractors.mail import html_reader, mbox, mime, outlook
from dpe_server.extractors.mail.message import Message
from dpe_server.extractors.mail.paths import find, flattened, parts_of
from dpe_server.model import summaries
from dpe_server.model.errors import DpeError
from dpe_server.model.tree import JSON, Category, Document, Page, PageBuilder, Properties


def messages(f: BinaryIO, fmt: str, limits: Limits) -> tuple[list[Message], bool]:
    """The file's messages, flattened, at most `limits.max_pages`; and whether some were cut."""
    if fmt == "msg":
        found = [outlook.parse(f)]
        cut = False
    else:
        f.seek(0)
        data = f.read()
        if fmt == "mbox":
            raw, cut = mbox.messages(data, limits.max_pages)
            found = [mime.parse(m) for m in raw]
        else:
            found, cut = [mime.parse(data)], False
    every = flattened(found)
    return every[: limits.max_pages], cut or len(every) > limits.max_pages


def _paragraphs(text: str) -> list[str]:
    blocks = text.replace("\r\n", "\n").split("\n\n")
    return [b.strip() for b in blocks if b.strip()]


def _body(b: PageBuilder, message: Message, limits: Limits) -> None:
    reader = html_reader()
    if message.html is not None and reader is not None:
        try:
            doc = reader.extract(io.BytesIO(message.html.encode("utf-8")), limits)
        except DpeError:
            doc = None
        if doc is not None:
            for page in doc.pages:
                for el in page.elements:
                    if el.category is not Category.IMAGE:  # its pictures are the message's
                        b.add(el.category, el.summary, el.content, el.metadata)
            return
    if message.plain is not None:
        texts = _paragraphs(message.plain)
    else:
        texts = html_text.paragraphs(message.html or "")
    for text in texts:
        b.add(Category.TEXT, summaries.text(text), {"text": text})


def _page(index: int, message: Message, limits: Limits) -> tuple[Page, list[JSON]]:
    b = PageBuilder(index, limits.max_elements_per_page)
    header = message.header()
    if message.subject:
        b.add(Category.HEADING, message.subject, {"level": 1, "text": message.subject})
    lines = [f"{k.capitalize()}: {v}" for k, v in header.items() if k != "subject"]
    if lines:
        b.add(Category.TEXT, summaries.text("; ".join(lines)), {"text": "\n".join(lines)})
    _body(b, message, limits)
    for calendar in message.calendars:
        b.add(Category.TEXT, summaries.text(f"Calendar: {calendar}"), {"text": calendar})
    children: list[JSON] = []
    for path, part in parts_of(index, message):
        name = path.rpartition("/")[2]
        if part.inline:
            content: dict[str, JSON] = {"description": name, "mime_type": part.mime_type}
            summary = summaries.image(name, part.mime_type, None, None)
            b.add(Category.IMAGE, summary, content, {"part": path})
            continue
        size = len(part.data)
        link: dict[str, JSON] = {"text": name, "url": path, "kind": "attachment", "name": name}
        link |= {"mime_type": part.mime_type, "size": size}
        b.add(Category.LINK, summaries.link(name, path), link, {"child": path})
        children.append({"path": path, "name": name, "mime_type": part.mime_type, "size": size})
    title = message.subject or message.sender or f"Message {index + 1}"
    meta: dict[str, JSON] = dict(header)
    return b.build(title, meta), children


def _document(f: BinaryIO, fmt: str, limits: Limits) -> Document:
    found, cut = messages(f, fmt, limits)
    pages, children = [], []
    for i, message in enumerate(found):
        page, listed = _page(i, message, limits)
        pages.append(page)
        children += listed
    subject = found[0].subject if found else ""
    props = Properties(len(pages), title=subject or None, page_titles=tuple(p.title for p in pages))
    meta: dict[str, JSON] = {}
    if children:
        meta["children"] = children
    if cut or any(p.metadata.get("truncated") for p in pages):
        meta["truncated"] = True
    return Document(props, tuple(pages), meta)


def member(f: BinaryIO, fmt: str, path: str, limits: Limits) -> bytes:
    """The bytes of the part at `path` (an attachment, an inline picture); KeyError if none."""
    return find(messages(f, fmt, limits)[0], path).data


def members(
    f: BinaryIO, fmt: str, paths: Sequence[str], limits: Limits
) -> Iterator[tuple[str, Callable[[], bytes]]]:
    """`member` for each of `paths`, the file's messages read once."""
    found = messages(f, fmt, limits)[0]
    for path in paths:
        yield path, functools.partial(lambda p: find(found, p).data, path)


def picture(f: BinaryIO, fmt: str, metadata: Mapping[str, JSON], max_bytes: int) -> bytes | None:
    data = member(f, fmt, str(metadata.get("part", "")), Limits())
    return data if len(data) <= max_bytes else None


def _extractor(fmt: str, suffixes: tuple[str, ...]) -> Extractor:
    def probe(f: BinaryIO, limits: Limits) -> Properties:
        return _document(f, fmt, limits).properties

    def extract(f: BinaryIO, limits: Limits) -> Document:
        return _document(f, fmt, limits)

    def extract_pages(f: BinaryIO, indices: Sequence[int], limits: Limits) -> list[Page]:
        wanted = set(indices)
        return [p for p in _document(f, fmt, limits).pages if p.page_index in wanted]

    return Extractor(probe, extract, extract_pages)


EML = _extractor("eml", (".eml",))
MSG = _extractor("msg", (".msg",))
MBOX = _extractor("mbox", (".mbox",))
