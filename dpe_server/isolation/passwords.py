"""The passwords file (`--passwords FILE`, or `DPE_SERVER_PASSWORDS` naming it): which
passwords to try on which files of the folder.

    default = ["first", "second"]        # tried on every protected file, after the patterns'

    [files]
    "finance/*.xlsx" = ["q3-secret"]     # a glob over the path inside the folder
    "board.pdf" = "one password"         # a pattern without `/` also matches a file's name

`*` matches any characters, `/` included. A file's passwords are those of every pattern it
matches, in file order, then the `default` list. The jobs of a file carry them to the worker
over its pipe (never argv or the environment); the cache key of a file folds in `digest`,
which says which entries apply and how many passwords each holds, never a password: a file
whose entry is removed or shortened is read again rather than served from the cache.
"""

from __future__ import annotations

import fnmatch
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath


class PasswordsFileError(ValueError):
    """The passwords file cannot be used; the message says why (never quoting a password)."""


@dataclass(frozen=True, slots=True)
class Passwords:
    patterns: tuple[tuple[str, tuple[str, ...]], ...] = field(default=(), repr=False)
    default: tuple[str, ...] = field(default=(), repr=False)

    def _entries(self, rel: str) -> list[tuple[str, tuple[str, ...]]]:
        rel = rel.partition("\0")[0]  # a document inside a file: the file's (docs/children.md)
        name = PurePosixPath(rel).name
        found = [
            (pattern, words)
            for pattern, words in self.patterns
            if fnmatch.fnmatchcase(rel, pattern)
            or ("/" not in pattern and fnmatch.fnmatchcase(name, pattern))
        ]
        if self.default:
            found.append(("", self.default))
        return found

    def for_path(self, rel: str) -> tuple[str, ...]:
        """The passwords to try on the file at `rel` (inside the folder), in order."""
        words = (w for _, found in self._entries(rel) for w in found)
        return tuple(dict.fromkeys(words))

    def digest(self, rel: str) -> str:
        """Which entries apply to `rel` and how many passwords each holds (no password):
        part of the file's cache key. Empty when none applies."""
        if not (self.patterns or self.default):
            return ""  # no passwords file: asked of every file at start
        entries = self._entries(rel)
        if not entries:
            return ""
        text = "\0".join(f"{pattern}\0{len(words)}" for pattern, words in entries)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


NO_PASSWORDS = Passwords()


def _words(value: object, where: str) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(w, str) for w in items):
        raise PasswordsFileError(f"{where} must be a string or a list of strings")
    return tuple(items)


def parse_passwords(data: Mapping[str, object]) -> Passwords:
    """The `Passwords` of a parsed TOML document."""
    unknown = sorted(set(data) - {"default", "files"})
    if unknown:
        raise PasswordsFileError(
            f"unknown key {unknown[0]!r}: the file holds `default` and a [files] table"
        )
    default = _words(data.get("default", []), "`default`")
    files = data.get("files", {})
    if not isinstance(files, dict):
        raise PasswordsFileError("[files] must be a table of glob patterns")
    patterns = tuple(
        (str(p).lstrip("/"), _words(w, f"the entry of pattern {p!r}")) for p, w in files.items()
    )
    return Passwords(patterns, default)


def load_passwords(path: Path) -> Passwords:
    """Read the passwords file at `path`; `PasswordsFileError` names what is wrong."""
    import tomllib  # only when a passwords file is given

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise PasswordsFileError(
            f"cannot read {path} ({exc.strerror or type(exc).__name__})"
        ) from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        # TOMLDecodeError says where (line, column), not what: no password is quoted.
        reason = str(exc) if isinstance(exc, tomllib.TOMLDecodeError) else "not UTF-8 text"
        raise PasswordsFileError(f"{path} is not valid TOML: {reason}") from None
    return parse_passwords(data)
