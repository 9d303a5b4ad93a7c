"""The size cap of one element: what a Level 3 read returns when an element is too big.

The extractors bound every element in rows (row blocks) but not in characters: a spreadsheet
cell holds up to 32,767 of them, so 162 rows of three such cells make a 16 MB table. An
element whose JSON body (`format=json`, as served) would pass `max_bytes` is served in a
bounded form that keeps its structure (docs/limits.md):

1. every string of its `content` and `metadata` longer than one common length keeps that many
   first characters (the most that fits, at least `MIN_KEPT_CHARS`), followed by a marker
   saying how long it was: `…[cut: 32,767 characters in all]`;
2. only when that is not enough (very many short cells), the longest lists lose entries from
   their end: a table's `rows` then says `rows_truncated: true` (`total_rows` stays);
3. the payload says what was done: `cut: {bytes, max_bytes, strings_cut, kept_chars}`, with
   `dropped: {path: entries}` after step 2.

The cut is made on the JSON payload, so `format=markdown` and `format=text` render the same
bounded element. `json_size` measures a body without building it. Pure functions.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

from dpe_server.model.tree import JSON

DEFAULT_MAX_ELEMENT_BYTES = 512 * 1024
"""`--max-element-bytes` unless told otherwise."""
MIN_MAX_ELEMENT_BYTES = 16 * 1024
"""The smallest cap accepted: room for an element's identity, its skeleton and the record."""
MIN_KEPT_CHARS = 200
"""A cut string keeps at least this many characters (lists lose entries before that)."""
CUT_FIELDS = ("content", "metadata")
"""The parts of a Level 3 payload that can be cut; its identity fields never are."""
CUT_MARK = "…[cut: "
"""What follows the kept characters of a cut string (then its length and `characters in all]`)."""
_RECORD_RESERVE = 512
"""Bytes kept free for the `cut` record while choosing how much of each string to keep."""

_encode = json.encoder.encode_basestring  # what json.dumps uses with ensure_ascii=False


def json_size(value: JSON, depth: int = 0) -> int:
    """UTF-8 bytes of `json.dumps(value, ensure_ascii=False, indent=2)` (the JSON body of a
    read, `render.render`) without building it; `depth` is the value's nesting level."""
    return _Sizer(None).size(value, depth)


def size_within(value: JSON, limit: int) -> int | None:
    """`json_size(value)` when it is at most `limit`, else None. It stops once past `limit`,
    so it costs about what measuring `limit` bytes costs, however large `value` is."""
    try:
        return _Sizer(limit).size(value, 0)
    except _Over:
        return None


class _Over(Exception):
    """The running size passed the limit (`size_within`)."""


class _Sizer:
    """A running total of JSON bytes, optionally stopping past a limit."""

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self.total = 0

    def size(self, value: JSON, depth: int) -> int:
        self._walk(value, depth)
        return self.total

    def _add(self, n: int) -> None:
        self.total += n
        if self.limit is not None and self.total > self.limit:
            raise _Over

    def _walk(self, value: JSON, depth: int) -> None:
        if isinstance(value, str):
            if self.limit is not None and self.total + len(value) > self.limit:
                raise _Over  # its JSON is longer still: no need to escape it
            self._add(_str_size(value))
        elif value is None or value is True:
            self._add(4)
        elif value is False:
            self._add(5)
        elif isinstance(value, int):
            self._add(len(int.__repr__(value)))
        elif isinstance(value, float):
            self._add(len(_float_repr(value)))
        elif isinstance(value, dict | list | tuple):
            if not value:
                self._add(2)
                return
            # brackets, each entry's newline and indentation, the commas, the closing line
            self._add(2 + len(value) * (2 * depth + 4) + 2 * depth)
            if isinstance(value, dict):
                for k, v in value.items():
                    self._add(_str_size(_key(k)) + 2)
                    self._walk(v, depth + 1)
            else:
                for v in value:
                    self._walk(v, depth + 1)
        else:
            raise TypeError(f"{type(value).__name__} is not JSON")


def cap_element(
    payload: dict[str, JSON], max_bytes: int, size: int | None = None
) -> dict[str, JSON]:
    """A Level 3 payload as served: itself when its JSON body is at most `max_bytes` (or
    `max_bytes` is 0), else its bounded form (module doc). `size`: its `json_size`, if known."""
    full = json_size(payload) if size is None else size
    if max_bytes <= 0 or full <= max_bytes:
        return payload
    long = [(len(s), _str_size(s)) for s in _strings(payload) if len(s) > MIN_KEPT_CHARS]
    kept = _kept_chars(full, long, max_bytes - _RECORD_RESERVE)
    while True:
        out = _cut_strings(payload, kept, full, max_bytes)
        over, cut = json_size(out) - max_bytes, int(out["cut"]["strings_cut"])
        if over <= 0 or kept <= MIN_KEPT_CHARS or cut == 0:
            break
        kept = max(MIN_KEPT_CHARS, kept - math.ceil(over / cut) - 1)
    if over > 0:
        _drop_entries(out, max_bytes)
    return out


def cut_string(text: str, kept: int) -> str:
    """`text` cut to its first `kept` characters, with the marker of a cut."""
    return f"{text[:kept]}{CUT_MARK}{len(text):,} characters in all]"


def kept_part(text: str) -> str | None:
    """What a cut string kept of the original (None: `text` is not cut)."""
    head, mark, tail = text.rpartition(CUT_MARK)
    return head if mark and tail.endswith(" characters in all]") else None


# ---- step 1: long strings --------------------------------------------------------------------


def _kept_chars(full: int, long: list[tuple[int, int]], budget: int) -> int:
    """The most characters every long string may keep for the body to fit `budget` (an
    estimate: `cap_element` checks the exact size and tries less when it is over)."""

    def estimate(kept: int) -> float:
        saved = 0.0
        for length, size in long:
            if length > kept:
                per_char = (size - 2) / length
                saved += size - (2 + kept * per_char + len(cut_string("", 0)) + 8)
        return full - saved

    lo, hi = MIN_KEPT_CHARS, max((length for length, _ in long), default=MIN_KEPT_CHARS)
    if estimate(lo) > budget:
        return lo
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if estimate(mid) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _cut_strings(payload: dict[str, JSON], kept: int, full: int, max_bytes: int) -> dict[str, Any]:
    count = [0]

    def cut(value: JSON) -> JSON:
        if isinstance(value, str):
            if len(value) <= kept:
                return value
            count[0] += 1
            return cut_string(value, kept)
        if isinstance(value, dict):
            return {k: cut(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [cut(v) for v in value]
        return value

    out = {k: cut(v) if k in CUT_FIELDS else v for k, v in payload.items()}
    out["cut"] = {
        "bytes": full,
        "max_bytes": max_bytes,
        "strings_cut": count[0],
        "kept_chars": kept,
    }
    return out


def _strings(payload: dict[str, JSON]) -> Iterator[str]:
    stack: list[JSON] = [payload.get(k) for k in CUT_FIELDS]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            yield value
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list | tuple):
            stack.extend(value)


# ---- step 2: entries of the longest lists ----------------------------------------------------


def _drop_entries(out: dict[str, Any], max_bytes: int) -> None:
    """Drop entries from the end of the largest lists of `out` (a fresh copy) until it fits."""
    dropped: dict[str, int] = out["cut"].setdefault("dropped", {})
    while (over := json_size(out) - max_bytes) > 0:
        lists = [(json_size(v, len(p)), p, v) for p, v in _lists(out) if v]
        if not lists:
            return  # nothing left to drop (a cap below MIN_MAX_ELEMENT_BYTES)
        _, path, entries = max(lists, key=lambda found: found[0])
        depth, keep, freed = len(path), len(entries), 0
        while keep > 0 and freed < over:
            keep -= 1
            freed += json_size(entries[keep], depth + 1) + 2 * (depth + 1) + 2
        name = ".".join(path)
        dropped[name] = dropped.get(name, 0) + len(entries) - keep
        del entries[keep:]
        if path == ("content", "rows"):
            out["content"]["rows_truncated"] = True


def _lists(out: dict[str, Any]) -> Iterator[tuple[tuple[str, ...], list[Any]]]:
    stack: list[tuple[tuple[str, ...], JSON]] = [((k,), out.get(k)) for k in CUT_FIELDS]
    while stack:
        path, value = stack.pop()
        if isinstance(value, dict):
            stack.extend(((*path, str(k)), v) for k, v in value.items())
        elif isinstance(value, list):
            yield path, value
            stack.extend(((*path, str(i)), v) for i, v in enumerate(value))


# ---- JSON details ----------------------------------------------------------------------------


def _str_size(text: str) -> int:
    encoded = _encode(text)
    return len(encoded) if encoded.isascii() else len(encoded.encode("utf-8", "surrogatepass"))


def _float_repr(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if value in (math.inf, -math.inf):
        return "Infinity" if value > 0 else "-Infinity"
    return float.__repr__(value)


def _key(key: object) -> str:
    """A dict key as json.dumps writes it."""
    if isinstance(key, str):
        return key
    if key is None or isinstance(key, bool):
        return json.dumps(key)
    if isinstance(key, float):
        return _float_repr(key)
    return str(key)
