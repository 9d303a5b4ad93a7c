"""Mailboxes (.mbox: mboxo and mboxrd): messages one after the other, each starting with a
`From ` line at the start of the file or after an empty line; a `>From ` line inside a
message is its `From ` line quoted."""

from __future__ import annotations

import re

_FROM = re.compile(rb"(?:\A|\n\n|\r\n\r\n)From [^\n]*\n")
_QUOTED = re.compile(rb"^>(>*From )", re.MULTILINE)


def messages(data: bytes, limit: int) -> tuple[list[bytes], bool]:
    """The first `limit` messages' bytes, and whether there were more."""
    starts = [m for m in _FROM.finditer(data)]
    out: list[bytes] = []
    for i, m in enumerate(starts[:limit]):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(data)
        out.append(_QUOTED.sub(rb"\1", data[m.end() : end]))
    return out, len(starts) > limit
