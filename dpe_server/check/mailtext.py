"""The text of each message of an e-mail file as an independent reader finds it, for the word
check (`L2.words`, `fidelity.compare`): Python's `email` package (`policy.default`) for an
.eml and each message of an .mbox (`mailbox`), the compound file's streams read with `olefile`
for an Outlook .msg.

A message's text is its From, To, Cc and Subject fields, then its own parts as a mail client
shows them: of a `multipart/alternative`, the HTML alternative when there is one (read as a
browser shows it, `fidelity.browser_text`), else the last; a plain part standing alone; never
an attachment, whose words are its own document's (docs/children.md). A message carried whole
inside another (`message/rfc822`) is a page of its own, after the message that carries it, as
the server pages them. Of a .msg, the top-level message only: the messages it carries are
pages the reference leaves empty.
"""

from __future__ import annotations

from email.message import EmailMessage, Message
from pathlib import Path

from dpe_server.check.fidelity import browser_text

HEADERS = ("From", "To", "Cc", "Subject")
_MSG_TEXT = ("0037", "0C1A", "0E04", "0E03", "1000")
"""Outlook properties read as text: subject, sender's name, To, Cc, plain body."""
_MSG_HTML = "__substg1.0_10130102"


def pages(path: Path) -> list[str]:
    """The text of each message in the file at `path`, in the server's page order."""
    if path.suffix.lower() == ".msg":
        return [_outlook(path)]
    out: list[str] = []
    for message in _messages(path):
        out += _flattened(message)
    return out


def plain_parts(path: Path) -> str:
    """Every plain-text part of the messages of an .eml or .mbox, alternatives included
    ("" for a .msg, whose plain body `pages` reads)."""
    if path.suffix.lower() == ".msg":
        return ""
    texts = []
    for message in _messages(path):
        for part in message.walk():
            if part.get_content_type() == "text/plain" and not _attached(part):
                texts.append(_content(part))
    return "\n".join(texts)


def _messages(path: Path) -> list[Message]:
    import email
    import email.policy

    if path.suffix.lower() != ".mbox":
        return [email.message_from_bytes(path.read_bytes(), policy=email.policy.default)]
    import mailbox

    box = mailbox.mbox(str(path), create=False)
    try:
        return [
            email.message_from_bytes(box.get_bytes(key), policy=email.policy.default)
            for key in box.iterkeys()
        ]
    finally:
        box.close()


def _attached(part: Message) -> bool:
    return isinstance(part, EmailMessage) and part.is_attachment()


def _flattened(message: Message) -> list[str]:
    own: list[str] = [str(message.get(h) or "") for h in HEADERS]
    carried: list[Message] = []
    _walk(message, own, carried)
    out = ["\n".join(own)]
    for inner in carried:
        out += _flattened(inner)
    return out


def _walk(part: Message, own: list[str], carried: list[Message]) -> None:
    kind = part.get_content_type()
    if kind == "message/rfc822":
        payload = part.get_payload()
        carried += (
            [m for m in payload if isinstance(m, Message)] if isinstance(payload, list) else []
        )
        return
    if part.is_multipart():
        subparts = [p for p in part.get_payload() if isinstance(p, Message)]
        if kind == "multipart/alternative" and subparts:
            html = [p for p in subparts if _holds(p, "text/html")]
            subparts = [html[-1] if html else subparts[-1]]
        for sub in subparts:
            _walk(sub, own, carried)
        return
    if _attached(part):
        return
    if kind == "text/plain":
        own.append(_content(part))
    elif kind == "text/html":
        own.append(browser_text(_content(part).encode("utf-8")))


def _holds(part: Message, kind: str) -> bool:
    return any(p.get_content_type() == kind for p in part.walk())


def _content(part: Message) -> str:
    payload = part.get_payload(decode=True)
    if not isinstance(payload, bytes):
        return ""
    return payload.decode(part.get_content_charset() or "utf-8", "replace")


def _outlook(path: Path) -> str:
    import olefile

    with olefile.OleFileIO(str(path)) as ole:
        texts = []
        for prop in _MSG_TEXT:
            for kind, encoding in (("001F", "utf-16-le"), ("001E", "cp1252")):
                name = f"__substg1.0_{prop}{kind}"
                if ole.exists(name):
                    texts.append(ole.openstream(name).read().decode(encoding, "replace"))
                    break
        if ole.exists(_MSG_HTML):
            texts.append(browser_text(ole.openstream(_MSG_HTML).read()))
    return "\n".join(t.replace("\0", "") for t in texts)
