"""Outlook messages (.msg, MS-OXMSG): a compound file read with `olefile`. Each property of a
message, recipient or attachment is a stream named `__substg1.0_<id><type>` of its storage
(strings UTF-16 when the type is 001F, else the message's 8-bit code page); the date is the
transport header's `Date:`, else the submit or delivery time of the fixed-length property
stream. A message attached to another (attach method 5) is a message of its own, read
recursively (`Message.forwarded`: pages of their own)."""

from __future__ import annotations

import re
import struct
from datetime import UTC, datetime, timedelta
from typing import BinaryIO

import olefile

from dpe_server.extractors.mail.message import Message, Part
from dpe_server.model.errors import CorruptError

MAX_FORWARDED = 3
"""Messages inside messages read this deep at most."""

_SUBJECT, _SENDER_NAME, _SENDER_ADDRESS, _SENDER_SMTP = 0x0037, 0x0C1A, 0x0C1F, 0x5D01
_DISPLAY_TO, _DISPLAY_CC, _BODY, _HTML, _HEADERS = 0x0E04, 0x0E03, 0x1000, 0x1013, 0x007D
_ATTACH_LONG_NAME, _ATTACH_NAME, _DISPLAY_NAME = 0x3707, 0x3704, 0x3001
_ATTACH_DATA, _ATTACH_MIME, _ATTACH_CID = 0x3701, 0x370E, 0x3712
_SUBMIT_TIME, _DELIVERY_TIME = 0x0039, 0x0E06
_STRING, _STRING8, _BINARY, _TIME = 0x001F, 0x001E, 0x0102, 0x0040
_DATE_LINE = re.compile(r"^Date:[ \t]*(.+)$", re.MULTILINE | re.IGNORECASE)
_FILETIME_EPOCH = datetime(1601, 1, 1, tzinfo=UTC)


def parse(f: BinaryIO) -> Message:
    f.seek(0)
    try:
        ole = olefile.OleFileIO(f)
    except (OSError, ValueError, struct.error, IndexError) as exc:
        raise CorruptError(f"The .msg file's compound file is damaged ({exc}).") from None
    with ole:
        if not any(entry[0].startswith("__substg1.0_") for entry in ole.listdir()):
            raise CorruptError("The file is a compound file but not an Outlook message.")
        return _message(ole, [], 0)


class _Storage:
    def __init__(self, ole: olefile.OleFileIO, path: list[str]) -> None:
        self.ole, self.path = ole, path

    def raw(self, prop: int, kind: int) -> bytes | None:
        name = [*self.path, f"__substg1.0_{prop:04X}{kind:04X}"]
        if not self.ole.exists("/".join(name)):
            return None
        try:
            return bytes(self.ole.openstream(name).read())
        except (OSError, ValueError, struct.error, IndexError):
            return None

    def text(self, prop: int) -> str:
        wide = self.raw(prop, _STRING)
        if wide is not None:
            return wide.decode("utf-16-le", "replace").rstrip("\0")
        narrow = self.raw(prop, _STRING8)
        return "" if narrow is None else _decode(narrow).rstrip("\0")

    def times(self, header: int) -> dict[int, datetime]:
        """The PtypTime values of its fixed-length property stream (`header` bytes first)."""
        data = b""
        try:
            name = [*self.path, "__properties_version1.0"]
            if self.ole.exists("/".join(name)):
                data = bytes(self.ole.openstream(name).read())
        except (OSError, ValueError, struct.error, IndexError):
            return {}
        out: dict[int, datetime] = {}
        for at in range(header, len(data) - 15, 16):
            kind, prop = struct.unpack_from("<HH", data, at)
            if kind == _TIME:
                (ticks,) = struct.unpack_from("<Q", data, at + 8)
                try:
                    out[prop] = _FILETIME_EPOCH + timedelta(microseconds=ticks // 10)
                except OverflowError:
                    continue
        return out


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("cp1252", "replace")


def _message(ole: olefile.OleFileIO, path: list[str], depth: int) -> Message:
    s = _Storage(ole, path)
    sender = s.text(_SENDER_NAME)
    address = s.text(_SENDER_SMTP) or s.text(_SENDER_ADDRESS)
    if address and "@" in address and address not in sender:
        sender = f"{sender} <{address}>" if sender else address
    html = s.raw(_HTML, _BINARY)
    html_text = _decode(html) if html is not None else (s.text(_HTML) or None)
    parts: list[Part] = []
    forwarded: list[Message] = []
    for storage in _children(ole, path, "__attach_version1.0_#"):
        inner = [*storage, "__substg1.0_3701000D"]
        if ole.exists("/".join(inner)):
            if depth < MAX_FORWARDED:
                forwarded.append(_message(ole, inner, depth + 1))
            continue
        a = _Storage(ole, storage)
        data = a.raw(_ATTACH_DATA, _BINARY)
        if data is None:
            continue  # a link to a file elsewhere, or an OLE object storage: nothing to read
        name = a.text(_ATTACH_LONG_NAME) or a.text(_ATTACH_NAME) or a.text(_DISPLAY_NAME)
        mime = a.text(_ATTACH_MIME).lower() or "application/octet-stream"
        cid = a.text(_ATTACH_CID)
        inline = mime.startswith("image/") and bool(cid) and html_text is not None
        parts.append(Part(name, mime, data, inline))
    return Message(
        sender=sender,
        to=s.text(_DISPLAY_TO),
        cc=s.text(_DISPLAY_CC),
        date=_date(s, 32 if not path else 24),
        subject=s.text(_SUBJECT),
        plain=s.text(_BODY) or None,
        html=html_text,
        parts=tuple(parts),
        forwarded=tuple(forwarded),
    )


def _children(ole: olefile.OleFileIO, path: list[str], prefix: str) -> list[list[str]]:
    """The storages right under `path` whose names start with `prefix`, in name order."""
    found = {
        tuple(entry[: len(path) + 1])
        for entry in ole.listdir(streams=True, storages=True)
        if len(entry) > len(path)
        and entry[: len(path)] == path
        and entry[len(path)].startswith(prefix)
    }
    return [list(p) for p in sorted(found)]


def _date(s: _Storage, header: int) -> str:
    found = _DATE_LINE.search(s.text(_HEADERS))
    if found:
        return " ".join(found.group(1).split())
    times = s.times(header)
    when = times.get(_SUBMIT_TIME) or times.get(_DELIVERY_TIME)
    return when.strftime("%a, %d %b %Y %H:%M:%S +0000") if when else ""
