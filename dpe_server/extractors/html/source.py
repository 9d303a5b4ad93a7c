"""A web page's file read into a tree: its bytes (bounded), the HTML part of a web archive
(`.mhtml`: MIME parts, each picture kept by its `Content-Location`), its charset (a
byte-order mark, the one its `<meta>` or XML declaration says, else detection) and lxml's
HTML parser (no network, no DTD, no entity expansion, comments and processing instructions
left out; nesting deeper than libxml2's 256 levels is `too_large`)."""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, BinaryIO

from lxml import etree

from dpe_server.extractors.base import Limits
from dpe_server.extractors.kit.charset import decode
from dpe_server.extractors.kit.whole import read_bounded
from dpe_server.model.errors import CorruptError, TooLargeError

if TYPE_CHECKING:
    from email.message import Message

_DECLARED = re.compile(
    rb"""<meta[^>]{0,200}?charset\s*=\s*["']?\s*([-\w:.]{1,40})|"""
    rb"""<\?xml[^>]{0,100}?encoding\s*=\s*["']([-\w:.]{1,40})""",
    re.IGNORECASE,
)
MAX_DEPTH = 256
"""How deep libxml2's HTML parser nests elements (without its `huge_tree` option)."""


@dataclass(slots=True)
class Source:
    """A page's tree and where its pictures are."""

    root: etree._Element
    encoding: str
    parts: dict[str, str] = field(default_factory=dict)
    """For a web archive: each picture part's `Content-Location` (and `cid:` name) → the
    location it is read back by (`Format.picture`, `metadata.part`)."""
    archive: bool = False
    """A web archive: its pictures are its own parts, none a file beside it."""


def is_archive(data: bytes) -> bool:
    """Whether `data` is a MIME web archive (MHTML: headers, then a multipart body)."""
    head = data[:4096].lower()
    return b"mime-version:" in head and b"multipart/" in head


def archive(data: bytes) -> Message:
    import email  # a web archive's MIME parts only (a page of HTML needs none of it)
    import email.policy

    return email.message_from_bytes(data, policy=email.policy.compat32)


def _locations(part: Message) -> list[str]:
    out = []
    location = part.get("Content-Location")
    if location:
        out.append(str(location).strip())
    cid = part.get("Content-ID")
    if cid:
        out.append("cid:" + str(cid).strip().strip("<>"))
    return out


def archive_page(data: bytes) -> tuple[bytes, str | None, dict[str, str]]:
    """The HTML part of a web archive, its declared charset, and its picture parts."""
    message = archive(data)
    html: tuple[bytes, str | None] | None = None
    parts: dict[str, str] = {}
    for part in message.walk():
        if part.is_multipart():
            continue
        kind = part.get_content_type()
        if kind == "text/html" and html is None:
            payload = part.get_payload(decode=True)
            html = (payload if isinstance(payload, bytes) else b"", part.get_content_charset())
        elif kind.startswith("image/"):
            names = _locations(part)
            for name in names:
                parts[name] = names[0]
    if html is None:
        raise CorruptError("The web archive holds no text/html part.")
    return html[0], html[1], parts


def archive_part(data: bytes, location: str) -> bytes | None:
    """The decoded bytes of the web archive's part at `location`."""
    for part in archive(data).walk():
        if not part.is_multipart() and location in _locations(part):
            payload = part.get_payload(decode=True)
            return payload if isinstance(payload, bytes) else None
    return None


def data_uri(src: str) -> tuple[str, bytes] | None:
    """The mime type and bytes of a `data:` URI (base64 or percent-encoded), or None."""
    head, sep, body = src.partition(",")
    if not sep or not head.lower().startswith("data:"):
        return None
    mime = head[5:].split(";", 1)[0].strip().lower() or "text/plain"
    if head.lower().endswith(";base64"):
        try:
            return mime, base64.b64decode("".join(body.split()), validate=False)
        except (binascii.Error, ValueError):
            return None
    from urllib.parse import unquote_to_bytes

    return mime, unquote_to_bytes(body)


def declared(data: bytes) -> str | None:
    """The charset the page's own start declares (`<meta charset>`, `http-equiv`, `<?xml
    encoding?>`), or None."""
    found = _DECLARED.search(data[:4096])
    if found is None:
        return None
    return (found[1] or found[2]).decode("ascii", "replace")


def parse(text: str) -> etree._Element:
    """The page's tree, parsed from its text as UTF-8 by lxml's HTML parser."""
    parser = etree.HTMLParser(
        encoding="utf-8",
        no_network=True,
        remove_comments=True,
        remove_pis=True,
        huge_tree=False,
    )
    root = etree.fromstring(text.encode("utf-8", "surrogatepass"), parser)
    if any("Excessive depth" in e.message for e in parser.error_log):
        raise TooLargeError(
            f"The page nests its elements more than {MAX_DEPTH} deep; no browser shows "
            "such a page as it is written, and it is not read."
        )
    if root is None:
        root = etree.fromstring(b"<html><body></body></html>", parser)
    return root


def load(f: BinaryIO, limits: Limits) -> Source:
    """The page of the file `f` (a web page or a web archive)."""
    data = read_bounded(f, limits)
    parts: dict[str, str] = {}
    charset = None
    archived = is_archive(data)
    if archived:
        data, charset, parts = archive_page(data)
    text, encoding = decode(data, charset or declared(data))
    return Source(parse(text), encoding, parts, archived)
