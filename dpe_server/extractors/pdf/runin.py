"""A numbered heading run into its body: `**5.1 Hyper Parameter Optimization** We have…`.

Papers and reports set a section heading in bold at the start of a line whose body text
follows on the same baseline. Read as one line, the heading was folded into the paragraph.
Such a line is split in two when its leading runs are bold, start with a section number
(`5.1`, `A.`, `IV.`), hold at most 80 characters and end without a full stop, and the
runs after them are regular prose (three words or more) less than two ems away; a table's
bold first cell followed by figures is no run-in heading (its row has no prose).
"""

from __future__ import annotations

import re

from dpe_server.extractors.pdf.lines import Line, make_lines

_NUMBERED = re.compile(r"^(?:[0-9]+(?:\.[0-9]+)*\.?|[A-Z]\.|[IVX]+\.)\s+\S")
_MAX_HEAD = 80


def run_in_head(line: Line) -> tuple[Line, Line] | None:
    """The line's run-in heading and the body text after it, or None (module doc)."""
    runs = sorted(line.runs, key=lambda r: r.x0)
    if line.rtl or line.mono or len(runs) < 2 or not runs[0].bold:
        return None
    k = 1
    while k < len(runs) and runs[k].bold:
        k += 1
    if k == len(runs):
        return None
    head = " ".join(r.text.strip() for r in runs[:k])
    body = " ".join(r.text for r in runs[k:])
    if (
        not _NUMBERED.match(head)
        or len(head) > _MAX_HEAD
        or head.endswith(".")
        or runs[k].x0 - runs[k - 1].x1 > 2 * line.size
        or len(body.split()) < 3
        or sum(ch.isalpha() for ch in body) < 0.6 * len(body.replace(" ", ""))
    ):
        return None
    (first,) = make_lines(list(runs[:k]))
    rest = make_lines(list(runs[k:]))
    if len(rest) != 1:
        return None
    return first, rest[0]
