"""A worksheet part read no further into its cells than the workbook's cell cap reaches.

A sheet exported with 1,000,000 rows x 10 columns is a part of 430 MB of XML, more than the
package lets one part inflate to (`Limits.max_part_bytes`), and 10,000,000 cells, five times
what a workbook's page may hold (`Limits.max_cells`). Its cells past the cap are never shown,
so they are not kept: the part is inflated a chunk at a time, cells counted as they come, and
once they pass the cap (and `CUT_MIN_CELLS`) the rows after the one being read are skipped up
to the end of `sheetData`, whose tail (merges, links, validations, drawings) is kept. The
caller marks the sheet `truncated`. A part the zip directory says is at most
`WHOLE_MAX_BYTES` is inflated whole into one buffer instead (`Package.whole`: each page of it
written once), its cells counted once, and cut the same way if they pass the cap. The count of
`<c ` goes to the scan, which does not count again.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from dpe_server.extractors.kit.package import Package, PartBytes, normalize_name
from dpe_server.extractors.xlsx.scan import sheet_prefix
from dpe_server.model.errors import TooLargeError

CUT_MIN_CELLS = 1_000_000
"""A part is cut only past this many cells, whatever is left of the cap: a smaller sheet is
read whole, as before the cut existed (its formulas and styles all found)."""

WHOLE_MAX_BYTES = 32 * 1024 * 1024
"""A part the zip directory says inflates to at most this is inflated into one buffer
(`Package.whole`), not a chunk at a time; cut afterwards if its cells pass the cap."""


class SheetPart(NamedTuple):
    data: PartBytes
    """The part inflated (`Package.whole`'s bytearray) or as kept (bytes; always when cut)."""
    cut: bool
    """Whether rows of its cells were left out."""
    c_tags: int | None
    """How many `<c ` (the sheet's element prefix after `<`) `data` holds, in `sheetData` or
    not; None when cut (counted before the cut)."""


def sheet_part(pkg: Package, part: str, max_cells: int) -> SheetPart:
    """The part's bytes, whether rows of its cells were left out, and its `<c ` count."""
    limit = max(max_cells, CUT_MIN_CELLS)
    whole = pkg.whole(part, WHOLE_MAX_BYTES)
    if whole is not None:
        c_tags = whole.count(b"<" + sheet_prefix(whole) + b"c ")
        if c_tags <= limit:
            return SheetPart(whole, False, c_tags)
    kept = bytearray()
    chunks = pkg.chunks(part) if whole is None else _slices(whole)
    c_tag = prefix = b""
    counted = cells = 0
    for chunk in chunks:
        kept += chunk
        _check_size(pkg, part, len(kept))
        if not c_tag:
            if len(kept) < 8192 and b"<sheetData" not in kept:
                continue
            prefix = sheet_prefix(bytes(kept[:8192]))
            c_tag = b"<" + prefix + b"c "
        cells += kept.count(c_tag, counted)
        counted = max(counted, len(kept) - len(c_tag) + 1)
        if cells > limit:
            row_end = b"</" + prefix + b"row>"
            cut = kept.rfind(row_end)
            if cut < 0:
                continue
            close = b"</" + prefix + b"sheetData>"
            # What follows the last whole row may already hold the end of the cells and the
            # tail (the cap passed in the part's last chunk), or the first bytes of `close`.
            pending = bytes(kept[cut + len(row_end) :])
            del kept[cut + len(row_end) :]
            kept += close + _after(chunks, close, pending)
            _check_size(pkg, part, len(kept))
            return SheetPart(bytes(kept), True, None)
    if not c_tag:  # a part under 8 KB without `<sheetData`: counted whole
        cells = kept.count(b"<" + sheet_prefix(bytes(kept)) + b"c ")
    return SheetPart(bytes(kept), False, cells)


def _slices(whole: bytearray, size: int = 64 * 1024) -> Iterator[memoryview]:
    """`whole` a chunk at a time, as the part would have been inflated (`Package.chunks`): a
    cut then falls after the row in which the cap was passed, not at the part's last row."""
    view = memoryview(whole)
    return (view[at : at + size] for at in range(0, len(whole), size))


def _after(
    chunks: Iterator[PartBytes] | Iterator[memoryview], close: bytes, window: bytes = b""
) -> bytes:
    """What follows `close` in `window` (the part's bytes read but not kept) and the rest of
    the part: its tail, skipping what comes before."""
    tail = bytearray()
    at = window.find(close)
    found = at >= 0
    if found:
        tail += window[at + len(close) :]
    for chunk in chunks:
        if found:
            tail += chunk
            continue
        window = window[-(len(close) - 1) :] + chunk
        at = window.find(close)
        if at >= 0:
            found = True
            tail += window[at + len(close) :]
    return bytes(tail)


def _check_size(pkg: Package, part: str, size: int) -> None:
    if size > pkg.limits.max_part_bytes:
        raise TooLargeError(
            f"The part {normalize_name(part)} inflates past "
            f"{pkg.limits.max_part_bytes // (1024 * 1024)} MiB."
        )
