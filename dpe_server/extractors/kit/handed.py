"""What the registry hands a format when it registers the formats: another format's reader
(the web page reader for Markdown, EPUB and e-mail bodies; the formats legacy files are read
as once converted; xlsx's cell layout for the value sheets; the pdf page layout for
recognised words), so that no format imports another (`tests/test_layout.py`)."""

from __future__ import annotations

from typing import Generic, TypeVar

T = TypeVar("T")


class Handed(Generic[T]):
    """One thing a format is handed (`give`), then uses (`get`, or `maybe` where it can do
    without)."""

    __slots__ = ("_value", "_what")

    def __init__(self, what: str) -> None:
        self._what = what
        """What it is and to whom it is handed, for the error of a registry that did not."""
        self._value: T | None = None

    def give(self, value: T) -> None:
        self._value = value

    def maybe(self) -> T | None:
        return self._value

    def get(self) -> T:
        if self._value is None:
            raise RuntimeError(f"no {self._what} was handed over (extractors.registry)")
        return self._value
