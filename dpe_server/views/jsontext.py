"""`dumps`: `json.dumps(value, ensure_ascii=False, indent=2)`, the same text, built faster.

With `indent` set, the standard library encodes in Python through a chain of generators (its
C encoder takes no indent before Python 3.14), one step per chunk and nesting level; a whole
Level 0 read of 10,000 documents is about 400,000 chunks. Here each container appends its
pieces to one list. Only what `json.dumps` accepts by default is accepted (dict, list, tuple,
str, int, float, bool, None; keys str, int, float, bool or None), and it fails where it fails
(TypeError; a circular container recurses until RecursionError instead of ValueError).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable

_encode: Callable[[str], str] = json.encoder.encode_basestring  # ensure_ascii=False's
_INDENT = "  "


def dumps(value: object) -> str:
    """`json.dumps(value, ensure_ascii=False, indent=2)`."""
    out: list[str] = []
    _write(value, "\n", out)
    return "".join(out)


def write(value: object, newline: str, out: list[str]) -> None:
    """Append to `out` the JSON of `value` as `dumps` writes it inside containers whose lines
    start with `newline` (`"\\n" + "  " * depth`): what a caller writing a container piece by
    piece (`views.listing`) puts between its own brackets."""
    _write(value, newline, out)


def _float(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if value == float("inf"):
        return "Infinity"
    if value == -float("inf"):
        return "-Infinity"
    return float.__repr__(value)


def _scalar(value: object) -> str | None:
    """The JSON of a value that is not a container; None for a container."""
    if isinstance(value, str):
        return _encode(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, dict | list | tuple):
        return None
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


_KEYS: dict[str, str] = {}
"""Keys met so far, as written before their value (`"doc_ref": `): payloads repeat them."""
_KEYS_KEPT = 4096


def _key(key: object) -> str:
    """A key as written before its value."""
    return _key_json(key) + ": "


def _key_json(key: object) -> str:
    if isinstance(key, str):
        return _encode(key)
    if key is None or isinstance(key, int | float):  # bool is an int
        return f'"{_scalar(key)}"'
    raise TypeError(f"keys must be str, int, float, bool or None, not {key.__class__.__name__}")


def _write(value: object, newline: str, out: list[str]) -> None:
    """Append the JSON of `value` at the nesting where a line starts with `newline`."""
    if isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        inner = newline + _INDENT
        separator = "{" + inner
        keys = _KEYS
        for key, item in value.items():
            name = keys.get(key) if type(key) is str else None
            if name is None:
                name = _key(key)
                if type(key) is str and len(keys) < _KEYS_KEPT:
                    keys[key] = name
            text = _encode(item) if type(item) is str else _scalar(item)
            if text is not None:
                out.append(f"{separator}{name}{text}")
            else:
                out.append(separator + name)
                _write(item, inner, out)
            separator = "," + inner
        out.append(newline + "}")
    elif isinstance(value, list | tuple):
        if not value:
            out.append("[]")
            return
        inner = newline + _INDENT
        separator = "[" + inner
        for item in value:
            text = _encode(item) if type(item) is str else _scalar(item)
            if text is not None:
                out.append(separator + text)
            else:
                out.append(separator)
                _write(item, inner, out)
            separator = "," + inner
        out.append(newline + "]")
    else:
        text = _scalar(value)
        assert text is not None  # not a container
        out.append(text)
