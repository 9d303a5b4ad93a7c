"""A Markdown text's front matter: YAML between `---` lines or TOML between `+++` lines at
its very start (as Jekyll, Hugo and GitHub write it). TOML is read by `tomllib`; YAML by a
reader of the flat subset front matter uses (`key: value`, quoted strings, numbers, booleans,
`[a, b]` lists and `- item` lists under a key), with no YAML library: nested mappings and
anything else are left out. Front matter that cannot be read is still taken off the text."""

from __future__ import annotations

import datetime
import re
import tomllib

from dpe_server.model.tree import JSON

_FENCES = {"---": "yaml", "+++": "toml"}
_KEY = re.compile(r"^([A-Za-z_][\w .-]*?)\s*:(?:\s+(.*))?$")
_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")
MAX_LINES = 1000
"""Front matter longer than this is not front matter."""


def split_front_matter(text: str) -> tuple[dict[str, JSON], str]:
    """The front matter's fields and the text after it (`{}` and the text when it has none)."""
    text = text.removeprefix("\ufeff")
    fence = text[:3]
    if fence not in _FENCES or text[3:4] not in ("\n", "\r"):
        return {}, text
    lines = text.splitlines(keepends=True)
    for end in range(1, min(len(lines), MAX_LINES)):
        if lines[end].rstrip() in (fence, "..." if fence == "---" else fence):
            source = "".join(lines[1:end])
            body = "".join(lines[end + 1 :])
            read = _toml(source) if _FENCES[fence] == "toml" else _yaml(source)
            return read, body
    return {}, text


def _json(value: object) -> JSON:
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): _json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json(v) for v in value]
    return value


def _toml(source: str) -> dict[str, JSON]:
    try:
        found = _json(tomllib.loads(source))
    except tomllib.TOMLDecodeError:
        return {}
    return found if isinstance(found, dict) else {}


def _scalar(raw: str) -> JSON:
    raw = raw.strip()
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
        return raw[1:-1]
    if raw.startswith("[") and raw.endswith("]"):
        return [_scalar(v) for v in raw[1:-1].split(",") if v.strip()]
    if raw.lower() in ("true", "false"):
        return raw.lower() == "true"
    if _NUMBER.match(raw):
        return float(raw) if "." in raw else int(raw)
    return raw.split(" #", 1)[0].rstrip()


def _yaml(source: str) -> dict[str, JSON]:
    out: dict[str, JSON] = {}
    key: str | None = None
    for line in source.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        indented = line[:1] in (" ", "\t")
        item = line.strip()
        if indented or item.startswith("- "):
            if key is not None and item.startswith("- "):
                listed = out.get(key)
                out[key] = [*(listed if isinstance(listed, list) else []), _scalar(item[2:])]
            continue
        found = _KEY.match(line)
        if found is None:
            key = None
            continue
        key = found[1].strip()
        value = found[2]
        if value is None or not value.strip() or value.strip() in ("|", ">"):
            out.pop(key, None)
        else:
            out[key] = _scalar(value)
    return out
