"""Internet messages (.eml, each message of an .mbox) read with the standard library's
`email` package (`policy.default`): the first plain and HTML bodies that are not attachments,
`text/calendar` parts, pictures shown inline, and every other leaf part an attachment (a
message attached as `message/rfc822` is attached as an `.eml`)."""

from __future__ import annotations

import email.message
from email import policy
from email.parser import BytesParser

from dpe_server.extractors.mail.message import Message, Part

MAX_NESTING = 20
"""MIME multiparts nested deeper than this are not entered (a hostile message)."""


def parse(data: bytes) -> Message:
    msg = BytesParser(policy=policy.default).parsebytes(data)
    bodies: dict[str, str] = {}
    calendars: list[str] = []
    parts: list[Part] = []
    _walk(msg, bodies, calendars, parts, 0)
    return Message(
        sender=_field(msg, "From"),
        to=_field(msg, "To"),
        cc=_field(msg, "Cc"),
        date=_field(msg, "Date"),
        subject=_field(msg, "Subject"),
        plain=bodies.get("plain"),
        html=bodies.get("html"),
        calendars=tuple(calendars),
        parts=tuple(parts),
    )


def _field(msg: email.message.Message, name: str) -> str:
    try:
        value = msg.get(name)
    except (ValueError, TypeError, IndexError, AttributeError):  # a header the policy cannot parse
        value = msg.get_all(name, [""])[0] if hasattr(msg, "get_all") else ""
    return " ".join(str(value or "").split())


def _walk(
    part: email.message.Message,
    bodies: dict[str, str],
    calendars: list[str],
    parts: list[Part],
    depth: int,
) -> None:
    ctype = part.get_content_type()
    if ctype == "message/rfc822":
        inner = part.get_payload()
        first = inner[0] if isinstance(inner, list) and inner else None
        if isinstance(first, email.message.Message):
            name = part.get_filename() or f"{_field(first, 'Subject') or 'message'}.eml"
            parts.append(Part(name, "message/rfc822", first.as_bytes()))
        return
    if part.is_multipart():
        if depth < MAX_NESTING:
            for sub in part.get_payload():
                if isinstance(sub, email.message.Message):
                    _walk(sub, bodies, calendars, parts, depth + 1)
        return
    disposition = part.get_content_disposition()
    filename = part.get_filename()
    if ctype in ("text/plain", "text/html") and disposition != "attachment" and not filename:
        key = ctype.partition("/")[2]
        if key not in bodies:
            bodies[key] = _text(part)
            return
    if ctype == "text/calendar":
        calendars.append(_text(part))
        return
    data = _bytes(part)
    inline = (
        ctype.startswith("image/")
        and disposition != "attachment"
        and bool(part.get("Content-ID") or disposition == "inline")
    )
    parts.append(Part(filename or "", ctype, data, inline))


def _bytes(part: email.message.Message) -> bytes:
    data = part.get_payload(decode=True)
    return data if isinstance(data, bytes) else b""


def _text(part: email.message.Message) -> str:
    data = _bytes(part)
    charset = part.get_content_charset() or "utf-8"
    try:
        text = data.decode(charset, "replace")
    except LookupError:  # a charset Python does not know
        text = data.decode("utf-8", "replace")
    return text.replace("\r\n", "\n").replace("\r", "\n")
