"""numbering.xml: what a (numId, ilvl) is, and the number label Word shows on each item.

A `w:num` points at a `w:abstractNum` whose `w:lvl`s give each level's `w:numFmt`,
`w:lvlText` ("%1." / "%1)" / "%1.%2.", `%N` standing for level N's counter), `w:start`
and `w:isLgl`; its `w:lvlOverride`s replace a level (`w:lvl`) or its start
(`w:startOverride`).

`Counters` numbers the items the way Word does: counters belong to the abstract numbering
(two `w:num`s sharing one continue each other's numbers), a `w:num` that overrides a level
(`w:startOverride` or a whole `w:lvl`) restarts it the first time it is used, an item at a
level advances that level's counter and resets the deeper ones. Every numbered paragraph
counts, an empty one too (Word shows its number). A page begins with the counters of every
numbered paragraph before it (body.py counts them without reading their text), so a list
continued across a page boundary keeps counting there as it does in Word.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from lxml import etree

from dpe_server.extractors.docx.xml import W, int_or, on, val
from dpe_server.extractors.kit.numformat import UNORDERED, number

_PLACEHOLDER = re.compile(r"%([1-9])")


@dataclass(frozen=True, slots=True)
class Level:
    fmt: str = "decimal"
    text: str = ""
    start: int = 1
    legal: bool = False
    """`w:isLgl`: every counter of the label written in decimal."""

    @property
    def ordered(self) -> bool:
        return self.fmt not in UNORDERED


_DEFAULT = Level()


def _level(lvl: etree._Element, base: Level = _DEFAULT) -> Level:
    start = val(lvl, "start")
    text = val(lvl, "lvlText")
    return Level(
        fmt=val(lvl, "numFmt") or base.fmt,
        text=base.text if text is None else text,
        start=int_or(start, base.start) if start is not None else base.start,
        legal=on(lvl.find(W + "isLgl")) or base.legal,
    )


@dataclass(frozen=True, slots=True)
class _Num:
    abstract: str
    levels: dict[int, Level]
    restarts: frozenset[int]
    """Levels overridden (`w:startOverride` or a `w:lvl`): their count restarts when this num
    is first used."""


class Numbering:
    """The numbering part: list membership, ordered vs bullet, and number labels."""

    def __init__(self, root: etree._Element | None) -> None:
        self._nums: dict[str, _Num] = {}
        if root is None:
            return
        abstract: dict[str, dict[int, Level]] = {}
        for absn in root.iterfind(W + "abstractNum"):
            levels = {
                int_or(lvl.get(W + "ilvl"), 0): _level(lvl) for lvl in absn.iterfind(W + "lvl")
            }
            abstract[absn.get(W + "abstractNumId", "")] = levels
        for num in root.iterfind(W + "num"):
            abstract_id = val(num, "abstractNumId") or ""
            levels = dict(abstract.get(abstract_id, {}))
            restarts = set()
            for over in num.iterfind(W + "lvlOverride"):
                ilvl = int_or(over.get(W + "ilvl"), 0)
                lvl = over.find(W + "lvl")
                if lvl is not None:
                    levels[ilvl] = _level(lvl, levels.get(ilvl, _DEFAULT))
                    restarts.add(ilvl)
                start = val(over, "startOverride")
                if start is not None:
                    levels[ilvl] = replace(levels.get(ilvl, _DEFAULT), start=int_or(start, 1))
                    restarts.add(ilvl)
            self._nums[num.get(W + "numId", "")] = _Num(abstract_id, levels, frozenset(restarts))

    def level(self, num_id: str, ilvl: int) -> Level | None:
        """That level's definition; None when the numId is not defined."""
        num = self._nums.get(num_id)
        if num is None:
            return None
        return num.levels.get(ilvl, _DEFAULT)

    def format(self, num_id: str, ilvl: int) -> str | None:
        """The numFmt of that level (`decimal`, `bullet`, `none`...); None when undefined."""
        lvl = self.level(num_id, ilvl)
        return None if lvl is None else lvl.fmt

    def is_list(self, num_id: str, ilvl: int) -> bool:
        return num_id != "0" and self.format(num_id, ilvl) not in (None, "none")

    def ordered(self, num_id: str, ilvl: int) -> bool:
        lvl = self.level(num_id, ilvl)
        return lvl is not None and lvl.ordered

    def label(self, num_id: str, ilvl: int, counters: list[int]) -> str:
        """The label of an item at `ilvl` whose levels 0..ilvl count `counters`."""
        legal = (self.level(num_id, ilvl) or _DEFAULT).legal

        def counter(m: re.Match[str]) -> str:
            n = int(m[1]) - 1
            if n >= len(counters):
                return ""
            fmt = "decimal" if legal else (self.level(num_id, n) or _DEFAULT).fmt
            return number(counters[n], fmt)

        return _PLACEHOLDER.sub(counter, (self.level(num_id, ilvl) or _DEFAULT).text).strip()

    def abstract(self, num_id: str) -> str:
        """The abstract numbering the num uses (its counters are shared); the numId if unknown."""
        num = self._nums.get(num_id)
        return num_id if num is None else f"a{num.abstract}"

    def restarts(self, num_id: str) -> frozenset[int]:
        num = self._nums.get(num_id)
        return frozenset() if num is None else num.restarts

    def start(self, num_id: str, ilvl: int) -> int:
        found = self.level(num_id, ilvl)
        return 1 if found is None else found.start


class Counters:
    """The running counters of the numbered paragraphs read so far."""

    def __init__(self, numbering: Numbering) -> None:
        self._numbering = numbering
        self._values: dict[str, dict[int, int]] = {}
        self._seen: set[str] = set()

    def copy(self) -> Counters:
        out = Counters(self._numbering)
        out._values = {k: dict(v) for k, v in self._values.items()}
        out._seen = set(self._seen)
        return out

    def advance(self, num_id: str, ilvl: int) -> list[int]:
        """Count one item at `ilvl`: the counters of levels 0..ilvl it shows."""
        numbering = self._numbering
        values = self._values.setdefault(numbering.abstract(num_id), {})
        if num_id not in self._seen:
            self._seen.add(num_id)
            for restarted in numbering.restarts(num_id):
                values.pop(restarted, None)
        values[ilvl] = values[ilvl] + 1 if ilvl in values else numbering.start(num_id, ilvl)
        for deeper in [lvl for lvl in values if lvl > ilvl]:
            del values[deeper]
        return [values.get(lvl, numbering.start(num_id, lvl)) for lvl in range(ilvl + 1)]
