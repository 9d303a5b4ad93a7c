"""Where each part of a file's messages is, inside the file: the path a child is named by
(docs/children.md). The first message's attachments are `attachments/<name>`, its inline
pictures `inline/<name>`; those of the n-th message (n > 1: an mbox's, a forwarded
message's) are under `messages/<n>/`. Names lose any folder, and a name given twice gets
` (2)`, ` (3)`... before its suffix; a part without a name is `part-<k>`."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from dpe_server.extractors.mail.message import Message, Part


def flattened(messages: Sequence[Message]) -> list[Message]:
    """Every message, each followed by those it carries whole."""
    out: list[Message] = []
    for m in messages:
        out.append(m)
        out += flattened(m.forwarded)
    return out


def _clean(name: str, k: int) -> str:
    base = name.replace("\\", "/").rpartition("/")[2].replace("\0", "").strip()
    return base if base not in ("", ".", "..") else f"part-{k}"


def _unique(name: str, taken: set[str]) -> str:
    stem, dot, suffix = name.rpartition(".")
    if not stem:
        stem, dot, suffix = name, "", ""
    candidate, n = name, 1
    while candidate.lower() in taken:
        n += 1
        candidate = f"{stem} ({n}){dot}{suffix}"
    taken.add(candidate.lower())
    return candidate


def parts_of(index: int, message: Message) -> Iterator[tuple[str, Part]]:
    """Each part of the `index`-th message (0-based) with its path."""
    prefix = f"messages/{index + 1}/" if index else ""
    taken: set[str] = set()
    for k, part in enumerate(message.parts, 1):
        folder = "inline" if part.inline else "attachments"
        yield f"{prefix}{folder}/{_unique(_clean(part.name, k), taken)}", part


def find(messages: Sequence[Message], path: str) -> Part:
    """The part at `path`; KeyError when none is."""
    for index, message in enumerate(messages):
        for found, part in parts_of(index, message):
            if found == path:
                return part
    raise KeyError(path)
