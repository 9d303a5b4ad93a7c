"""One e-mail message as the readers of its formats find it (`mime` for .eml and .mbox,
`outlook` for .msg): its header fields, its bodies, and the parts it carries."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Part:
    """A part of a message that is not one of its bodies: an attachment, or a picture the
    HTML body shows inline (`inline`)."""

    name: str
    mime_type: str
    data: bytes
    inline: bool = False


@dataclass(frozen=True, slots=True)
class Message:
    sender: str = ""
    to: str = ""
    cc: str = ""
    date: str = ""
    subject: str = ""
    plain: str | None = None
    html: str | None = None
    calendars: tuple[str, ...] = ()
    parts: tuple[Part, ...] = ()
    forwarded: tuple[Message, ...] = field(default=())
    """Messages it carries whole (an Outlook message attached to it): pages of their own."""

    def header(self) -> dict[str, str]:
        """Its header fields that say something, by their metadata name."""
        fields = {
            "from": self.sender,
            "to": self.to,
            "cc": self.cc,
            "date": self.date,
            "subject": self.subject,
        }
        return {k: v for k, v in fields.items() if v}
