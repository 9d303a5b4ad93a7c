"""A flat XML OpenDocument file (.fodt, .fodp): one `office:document` holding what a package
keeps in content.xml, styles.xml and meta.xml, its pictures inline as base64
(`office:binary-data`).

`FlatDocument` answers as the package would, so the readers of .odt and .odp read it
unchanged: each of the three parts is the one document root (every lookup they make starts at
`office:body`, `office:master-styles`, `office:meta`...); each embedded picture is a part
named `Pictures/embedded-N` and each inline object (a formula's `math:math`, a chart's
`office:document`) the part `Objects/embedded-N/content.xml` (N in document order, so a later
read finds the same one), the element's `xlink:href` set to that name and the inline data
taken out of the tree. The file is parsed once, by the same guarded
parser as a package's parts (no DOCTYPE, no entities, text nodes under libxml2's 10 MB cap),
after its size is checked against `Limits.max_part_bytes`.
"""

from __future__ import annotations

import base64
import binascii
from typing import BinaryIO

from lxml import etree

from dpe_server.extractors.base import Limits
from dpe_server.extractors.kit.package import Package
from dpe_server.extractors.kit.xml import parse_xml
from dpe_server.extractors.odf.package import DRAW, OFFICE, TEXT, XLINK
from dpe_server.model.errors import CorruptError, TooLargeError

PARTS = frozenset({"content.xml", "styles.xml", "meta.xml"})
"""The package parts a flat document stands for."""
PICTURES = "Pictures/embedded-"
OBJECTS = "Objects/embedded-"


class FlatDocument(Package):
    """A flat OpenDocument file opened as a package (only what the OpenDocument readers use:
    `has`, `size`, `read`, `head`, `xml`, `xml_or_none`, `names`)."""

    def __init__(self, f: BinaryIO, expected: str, limits: Limits) -> None:
        self.expected = expected
        self.limits = limits
        f.seek(0)
        data = f.read(limits.max_part_bytes + 1)
        if len(data) > limits.max_part_bytes:
            raise TooLargeError(
                f"The .{expected} file is over {limits.max_part_bytes // (1024 * 1024)} MiB."
            )
        self.root = parse_xml(data, f".{expected} document")
        if self.root.tag != OFFICE + "document":
            raise CorruptError(
                f"The .{expected} file is XML but not a flat OpenDocument document "
                "(its root is not office:document)."
            )
        self.mimetype = self.root.get(OFFICE + "mimetype", "")
        self._pictures: dict[str, str] = {}
        for binary in list(self.root.iter(OFFICE + "binary-data")):
            holder = binary.getparent()
            if holder is None:
                continue
            name = f"{PICTURES}{len(self._pictures) + 1}"
            self._pictures[name] = "".join((binary.text or "").split())
            holder.set(XLINK + "href", name)
            holder.remove(binary)
        self._objects: dict[str, etree._Element] = {}
        for obj in list(self.root.iter(DRAW + "object")):
            inline = next((c for c in obj if isinstance(c.tag, str)), None)
            if inline is None:
                continue
            folder = f"{OBJECTS}{len(self._objects) + 1}"
            self._objects[f"{folder}/content.xml"] = inline
            obj.set(XLINK + "href", f"./{folder}")
            obj.remove(inline)

    def close(self) -> None:
        return None

    def unindented(self) -> bytes:
        """The document's XML without the indentation an office suite writes between elements
        of a flat file (whitespace-only text outside paragraph content, where it means
        nothing), as a package's content.xml holds it: calamine's reader of .ods takes such
        whitespace inside a table row for a cell and gives up."""
        for el in self.root.iter():
            if not isinstance(el.tag, str) or el.tag.startswith(TEXT):
                continue  # a paragraph's content: every space counts
            if el.text is not None and not el.text.strip():
                el.text = None
            for child in el:
                if child.tail is not None and not child.tail.strip():
                    child.tail = None
        return etree.tostring(self.root, xml_declaration=True, encoding="UTF-8")

    def names(self) -> list[str]:
        return [*sorted(PARTS), *self._pictures, *self._objects]

    def has(self, name: str) -> bool:
        return name in PARTS or name in self._pictures or name in self._objects

    def size(self, name: str) -> int:
        """A picture's decoded size (estimated from its base64 length); 0 when absent."""
        return len(self._pictures.get(name, "")) * 3 // 4

    def read(self, name: str) -> bytes:
        """An embedded picture's bytes. KeyError when absent."""
        try:
            return base64.b64decode(self._pictures[name], validate=True)
        except (binascii.Error, ValueError):
            raise CorruptError(f"The embedded picture {name} is not valid base64.") from None

    def head(self, name: str, size: int = 256 * 1024) -> bytes:
        encoded = self._pictures[name][: (size // 3 + 1) * 4]
        try:
            return base64.b64decode(encoded, validate=True)[:size]
        except (binascii.Error, ValueError):
            return b""

    def xml(self, name: str) -> etree._Element:
        """The document root for content.xml, styles.xml and meta.xml; an inline object for
        its part. KeyError otherwise."""
        if name in PARTS:
            return self.root
        return self._objects[name]

    def xml_or_none(self, name: str) -> etree._Element | None:
        return self.xml(name) if self.has(name) and name not in self._pictures else None


def open_package(f: BinaryIO, expected: str, limits: Limits) -> Package:
    """The OpenDocument file `f` as a package: a zip, or a flat XML document."""
    from dpe_server.extractors.magic import sniff

    if sniff(f) in ("zip", "cfb", "pdf", "empty"):
        return Package(f, expected, limits)  # which says what a non-package is
    return FlatDocument(f, expected, limits)
