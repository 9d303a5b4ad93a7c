"""Field-and-type checking of JSON objects: the small vocabulary the payload rules use."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from dpe_server.check.report import Problem

Kind = str
"""A JSON type name: str, int, number, bool, list, object, any; `?` suffix = may be null."""

_NAMES: Final[dict[str, str]] = {
    "str": "a string",
    "int": "an integer",
    "number": "a number",
    "bool": "a boolean",
    "list": "a list",
    "object": "an object",
    "any": "any value",
}


def is_kind(value: Any, kind: Kind) -> bool:
    if kind.endswith("?"):
        return value is None or is_kind(value, kind[:-1])
    if kind == "any":
        return True
    if kind == "str":
        return isinstance(value, str)
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "list":
        return isinstance(value, list)
    if kind == "object":
        return isinstance(value, dict)
    raise ValueError(f"unknown kind {kind}")


def type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def fields(
    obj: Any,
    required: Mapping[str, Kind],
    optional: Mapping[str, Kind] | None = None,
    where: str = "",
) -> list[Problem]:
    """Problems with `obj`'s fields: a required one missing, or any of a wrong type."""
    at = f"{where}." if where else ""
    if not isinstance(obj, dict):
        return [Problem(f"{where or 'payload'} is an object", type_name(obj))]
    out: list[Problem] = []
    for name, kind in required.items():
        if name not in obj:
            out.append(Problem(f"field {at}{name} ({_describe(kind)})", "missing"))
        elif not is_kind(obj[name], kind):
            out.append(Problem(f"{at}{name} is {_describe(kind)}", type_name(obj[name])))
    for name, kind in (optional or {}).items():
        if name in obj and not is_kind(obj[name], kind):
            out.append(Problem(f"{at}{name} is {_describe(kind)}", type_name(obj[name])))
    return out


def items_of(
    obj: Any, required: Mapping[str, Kind], optional: Mapping[str, Kind] | None, where: str
) -> list[Problem]:
    """Field problems of every object in the list `obj` (the first few problems)."""
    if not isinstance(obj, list):
        return []
    out: list[Problem] = []
    for i, item in enumerate(obj):
        out += fields(item, required, optional, f"{where}[{i}]")
        if len(out) >= 5:
            break
    return out


def all_kind(obj: Any, kind: Kind, where: str) -> list[Problem]:
    """Every item of the list `obj` is of `kind` (the first offender)."""
    if not isinstance(obj, list):
        return []
    for i, item in enumerate(obj):
        if not is_kind(item, kind):
            return [Problem(f"{where}[{i}] is {_describe(kind)}", type_name(item))]
    return []


def _describe(kind: Kind) -> str:
    if kind.endswith("?"):
        return f"{_NAMES[kind[:-1]]} or null"
    return _NAMES[kind]
