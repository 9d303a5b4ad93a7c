"""E-mail: Internet messages (.eml), Outlook messages (.msg, read with `olefile`) and
mailboxes (.mbox), one page per message (`extract`): `mime` reads an Internet message,
`outlook` an Outlook one, `mbox` splits a mailbox, each into a `message`; `paths` names each
part inside the file; `html` reads an HTML body's text when no HTML format is registered.
Attachments are children: documents of their own the catalog serves (`Format.member` reads
one; docs/children.md).

The HTML body is read by the registered HTML reader when there is one, handed over by the
registry (`read_bodies_with`), never imported; else the plain body is read."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import BinaryIO

from dpe_server.extractors.base import Extractor, Format, Limits, Member, Members
from dpe_server.extractors.kit.handed import Handed
from dpe_server.model.errors import CorruptError, UnsupportedError
from dpe_server.model.tree import JSON

_NAMES = {"zip": "a zip archive", "pdf": "a PDF", "cfb": "an OLE2 compound file"}


def _check(f: BinaryIO, fmt: str, kind: str, limits: Limits) -> None:
    """A .msg is a compound file; an .eml or .mbox is text, never a zip, PDF or OLE2 file."""
    if fmt == "msg":
        if kind != "cfb":
            raise CorruptError("The file is not an Outlook message (not an OLE2 compound file).")
        return
    if kind in _NAMES:
        raise UnsupportedError(f"This file is {_NAMES[kind]} renamed to .{fmt}, not e-mail.")
    if fmt == "mbox":
        f.seek(0)
        if not f.read(5) == b"From ":
            raise CorruptError("The file is not a mailbox: it does not start with a `From ` line.")


def _picture(f: BinaryIO, fmt: str, metadata: Mapping[str, JSON], max_bytes: int) -> bytes | None:
    from dpe_server.extractors.mail.extract import picture

    return picture(f, fmt, metadata, max_bytes)


def _member(fmt: str) -> Member:
    def member(f: BinaryIO, path: str, limits: Limits) -> bytes:
        from dpe_server.extractors.mail.extract import member as read

        return read(f, fmt, path, limits)

    return member


def _members(fmt: str) -> Members:
    def members(
        f: BinaryIO, paths: Sequence[str], limits: Limits
    ) -> Iterator[tuple[str, Callable[[], bytes]]]:
        from dpe_server.extractors.mail.extract import members as read

        return read(f, fmt, paths, limits)

    return members


def _format(name: str, kind_name: str) -> Format:
    return Format(
        name=name,
        suffixes=(f".{name}",),
        kind_name=kind_name,
        page_unit="message",
        paged=False,
        extractor=f"dpe_server.extractors.mail.extract:{name.upper()}",
        check=_check,
        picture=_picture,
        member=_member(name),
        members=_members(name),
        recognises_pictures=False,
    )


EML = _format("eml", "an e-mail message")
MSG = _format("msg", "an Outlook message")
MBOX = _format("mbox", "a mailbox")

_READERS: Handed[Mapping[str, Format]] = Handed("format for e-mail bodies")


def read_bodies_with(formats: Mapping[str, Format]) -> None:
    """Read HTML bodies with the format `formats` names for `.html`, when there is one: the
    registry's, handed over when it registers the formats (`registry.py`)."""
    _READERS.give(formats)


def html_reader() -> Extractor | None:
    """The registered HTML reader's extractor, or None (the plain body is read instead)."""
    formats = _READERS.maybe()
    fmt = formats.get(".html") if formats is not None else None
    return fmt.load() if fmt is not None else None
