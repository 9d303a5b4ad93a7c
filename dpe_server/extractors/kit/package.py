"""Safe reading of OOXML packages (xlsx, pptx, docx): the zip and the XML inside it.

Every extractor of an OOXML format goes through `Package`:

- `sniff` (`extractors.magic`) tells what a file really is from its first bytes: a
  password-protected OOXML file is an OLE2/CFB container (`D0 CF 11 E0`), reported as
  `encrypted`; a legacy .doc/.xls/.ppt is CFB too but without an `EncryptionInfo` stream,
  reported as `unsupported`.
- zip member names are normalised (backslashes, a leading slash, case-insensitive lookup),
  because Excel opens packages written with `xl\\worksheets\\sheet1.xml`;
- sizes are enforced while inflating (declared sizes lie), per member and in total, along
  with the member count and the compression ratio;
- XML is parsed with entities and DTDs off and network access off; a part with a DOCTYPE is
  refused before parsing.

`Package.sanitized()` gives a clean in-memory copy (normalised names, every member inflated
once under the caps) for libraries that open the zip themselves (python-pptx, python-docx,
openpyxl). `Package.raw` gives a part's compressed bytes once they inflated under the caps, for
a clean copy that stays compressed (`kit.repack`: the one python-calamine reads for xlsx).
"""

from __future__ import annotations

import io
import posixpath
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from lxml import etree

from dpe_server.extractors.base import Limits
from dpe_server.extractors.kit.xml import parse_xml
from dpe_server.extractors.magic import sniff
from dpe_server.extractors.passwords import HOW_TO_GIVE
from dpe_server.model.errors import CorruptError, EncryptedError, TooLargeError, UnsupportedError

NS = {
    "r": "http://schemas.openxmlformats.org/officeDocument/2006/relationships",
    "pr": "http://schemas.openxmlformats.org/package/2006/relationships",
    "ct": "http://schemas.openxmlformats.org/package/2006/content-types",
    "a": "http://schemas.openxmlformats.org/drawingml/2006/main",
    "c": "http://schemas.openxmlformats.org/drawingml/2006/chart",
    "dgm": "http://schemas.openxmlformats.org/drawingml/2006/diagram",
    "m": "http://schemas.openxmlformats.org/officeDocument/2006/math",
    "cp": "http://schemas.openxmlformats.org/package/2006/metadata/core-properties",
    "dc": "http://purl.org/dc/elements/1.1/",
    "dcterms": "http://purl.org/dc/terms/",
    "mc": "http://schemas.openxmlformats.org/markup-compatibility/2006",
}

_CHUNK = 64 * 1024
_RATIO_FLOOR = 1024 * 1024  # members smaller than this are never refused for their ratio
_NOT_PLAIN = 0x61
"""Encrypted (bit 0), compressed patched data (bit 5), strong encryption (bit 6)."""
_UTF8_NAME = 0x800


LEGACY_STREAMS = {
    "WordDocument": (".doc", "a legacy Word 97-2003 .doc"),
    "Workbook": (".xls", "a legacy Excel 97-2003 .xls"),
    "Book": (".xls", "a legacy Excel 5 .xls"),
    "PowerPoint Document": (".ppt", "a legacy PowerPoint 97-2003 .ppt"),
}
"""The stream that names a legacy Office file inside an OLE2/CFB container: its suffix, in words."""


def cfb_kind(f: BinaryIO) -> str:
    """What an OLE2/CFB file holds: `encrypted` (a password-protected OOXML package), the
    suffix of the legacy Office format it is (`.xls`), or `""`. Rewinds `f`."""
    f.seek(0)
    data = f.read(4 * 1024 * 1024)
    f.seek(0)
    # Directory entry names are UTF-16LE; an encrypted OOXML package has these streams.
    if (
        "EncryptionInfo".encode("utf-16-le") in data
        or "EncryptedPackage".encode("utf-16-le") in data
    ):
        return "encrypted"
    for stream, (suffix, _) in LEGACY_STREAMS.items():
        if stream.encode("utf-16-le") in data:
            return suffix
    return ""


def cfb_error(f: BinaryIO, expected: str) -> Exception:
    """The error for an OLE2/CFB file with an OOXML suffix: encrypted, or a legacy format."""
    kind = cfb_kind(f)
    if kind == "encrypted":
        return EncryptedError(f"This .{expected} file is password-protected; {HOW_TO_GIVE}.")
    for suffix, what in LEGACY_STREAMS.values():
        if suffix == kind:
            return UnsupportedError(
                f"This file is {what} file renamed to .{expected}; save it as .{expected} "
                "to read it."
            )
    return UnsupportedError(
        f"This file is an OLE2 compound file, not an OOXML .{expected} package."
    )


def not_a_package_error(kind: str, expected: str) -> Exception:
    if kind == "empty":
        return CorruptError(f"The file is empty (0 bytes); it is not a .{expected} package.")
    if kind == "pdf":
        return UnsupportedError(f"This file is a PDF renamed to .{expected}.")
    return CorruptError(f"The file is not a .{expected} package (it is not a zip archive).")


PartBytes = bytes | bytearray
"""A part's bytes: `Package.whole` inflates into a bytearray, the other readers give bytes."""

_IN_STEP = 8 * 1024
_OUT_STEP = 32 * 1024
"""Compressed bytes handed to zlib at a time, and its output at most per call: zlib's first
output block, returned without a copy; what is left of the input (`unconsumed_tail`, copied
each call) stays small."""


def _inflate_into(data: bytes, size: int) -> bytearray | None:
    """Raw deflate `data` inflated into a buffer of `size` bytes; None unless the stream ends
    and gives exactly that many."""
    out = bytearray(size)
    inflate = zlib.decompressobj(-15)
    view = memoryview(data)
    at = 0
    for step in range(0, len(data), _IN_STEP):
        chunk: bytes | memoryview = view[step : step + _IN_STEP]
        while True:
            try:
                piece = inflate.decompress(chunk, _OUT_STEP)
            except zlib.error:
                return None
            if at + len(piece) > size:
                return None
            out[at : at + len(piece)] = piece
            at += len(piece)
            chunk = inflate.unconsumed_tail
            if not chunk and len(piece) < _OUT_STEP:
                break
        if inflate.eof:
            break
    return out if inflate.eof and at == size else None


def normalize_name(name: str) -> str:
    """A zip member name as a package part name: forward slashes, no leading slash."""
    return name.replace("\\", "/").lstrip("/")


def directory(f: BinaryIO, expected: str) -> list[zipfile.ZipInfo]:
    """A zip's directory (what an archive lists: every member, folders too), read without
    inflating anything."""
    f.seek(0)
    try:
        with zipfile.ZipFile(f) as z:
            return z.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise CorruptError(
            f"The .{expected} archive is damaged or incomplete ({exc}); if it is being "
            "written, it will be read again when it settles."
        ) from None


@dataclass(frozen=True, slots=True)
class Relationship:
    rid: str
    type: str
    target: str
    """The part name the relationship points to (resolved), or the URL when external."""
    external: bool

    @property
    def type_name(self) -> str:
        """The last path segment of the type (`image`, `chart`, `hyperlink`...)."""
        return self.type.rsplit("/", 1)[-1]


@dataclass(frozen=True, slots=True)
class RawMember:
    """A zip member's compressed bytes, with what a zip directory says of it (`kit.repack`)."""

    name: str
    method: int
    """zipfile.ZIP_STORED or zipfile.ZIP_DEFLATED."""
    crc: int
    data: bytes
    size: int
    """The inflated size, as counted while it was inflated (not as declared)."""
    head: bytes = b""
    """Written before `data` (`kit.repack.prefixed`): the member's bytes are head + data."""


class Package:
    """An OOXML zip opened under `Limits`. Use as a context manager or call `close()`."""

    def __init__(self, f: BinaryIO, expected: str, limits: Limits) -> None:
        self.expected = expected
        self.limits = limits
        kind = sniff(f)
        if kind == "cfb":
            raise cfb_error(f, expected)
        if kind != "zip":
            raise not_a_package_error(kind, expected)
        try:
            self._zip = zipfile.ZipFile(f)
        except (zipfile.BadZipFile, OSError, ValueError) as exc:
            raise CorruptError(
                f"The .{expected} package is damaged or incomplete ({exc}); if it is being "
                "written, it will be read again when it settles."
            ) from None
        infos = self._zip.infolist()
        if len(infos) > limits.max_members:
            raise TooLargeError(
                f"The package has {len(infos)} zip members, over the limit of {limits.max_members}."
            )
        self._by_name: dict[str, zipfile.ZipInfo] = {}
        for info in infos:
            if info.is_dir():
                continue
            key = normalize_name(info.filename).lower()
            previous = self._by_name.get(key)
            # Duplicated names: keep the larger member (an empty stub often precedes the data).
            if previous is None or info.file_size > previous.file_size:
                self._by_name[key] = info
        self._inflated = 0
        self._heads: dict[tuple[str, int], bytes] = {}
        self._sizes: dict[str, int] = {}
        """Inflated sizes of the parts read whole so far, by lower-case name (`raw`)."""

    def __enter__(self) -> Package:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._zip.close()

    def names(self) -> list[str]:
        """Every part name, normalised, in zip order."""
        return [normalize_name(i.filename) for i in self._by_name.values()]

    def has(self, name: str) -> bool:
        return normalize_name(name).lower() in self._by_name

    def info(self, name: str) -> zipfile.ZipInfo | None:
        """A part's directory entry (sizes as declared, flags), or None when it is absent."""
        return self._by_name.get(normalize_name(name).lower())

    def size(self, name: str) -> int:
        """The declared (uncompressed) size of a part; 0 when absent. Declared sizes may lie."""
        info = self._by_name.get(normalize_name(name).lower())
        return 0 if info is None else info.file_size

    def chunks(self, name: str) -> Iterator[bytes]:
        """A part inflated a chunk at a time, for a reader that keeps only some of it: the
        package's caps hold (inflated in all, compression ratio), the part's own
        (`max_part_bytes`) is the reader's to apply to what it keeps. KeyError when absent."""
        info = self._by_name.get(normalize_name(name).lower())
        if info is None:
            raise KeyError(name)
        return self._stream(info, whole=False)

    def _stream(
        self, info: zipfile.ZipInfo, whole: bool = True, password: bytes | None = None
    ) -> Iterator[bytes]:
        limits = self.limits
        done = 0
        try:
            with self._zip.open(info, pwd=password) as member:
                while chunk := member.read(_CHUNK):
                    done += len(chunk)
                    self._inflated += len(chunk)
                    if whole and done > limits.max_part_bytes:
                        raise TooLargeError(
                            f"The part {normalize_name(info.filename)} inflates past "
                            f"{limits.max_part_bytes // (1024 * 1024)} MiB."
                        )
                    if self._inflated > limits.max_total_inflated:
                        raise TooLargeError(
                            "The package inflates past "
                            f"{limits.max_total_inflated // (1024 * 1024)} MiB in all."
                        )
                    if done > _RATIO_FLOOR and done > limits.max_ratio * max(info.compress_size, 1):
                        raise TooLargeError(
                            f"The part {normalize_name(info.filename)} is compressed more than "
                            f"{limits.max_ratio:.0f} to 1, as a zip bomb is."
                        )
                    yield chunk
            if done <= limits.max_part_bytes:  # inflated whole under every cap (`raw`)
                self._sizes[normalize_name(info.filename).lower()] = done
        except (zipfile.BadZipFile, EOFError, OSError, ValueError) as exc:
            raise CorruptError(
                f"The part {normalize_name(info.filename)} of the .{self.expected} package is "
                f"damaged ({exc})."
            ) from None
        except NotImplementedError as exc:
            raise UnsupportedError(
                f"The part {normalize_name(info.filename)} uses a zip feature not supported "
                f"({exc})."
            ) from None

    def whole(self, name: str, most: int) -> bytearray | None:
        """A part inflated straight into one buffer of its size, when the zip directory says
        it inflates to at most `most` bytes and under the caps: `read`'s bytes, each page of
        them written once (zipfile inflates 64 KB at a time into pieces then joined, and one
        zlib call grows blocks then joins them: the part's memory touched two or three times,
        a page fault for every 4 KB of it). None when it is not so simple (another method,
        encrypted, not the size declared, any damage): `chunks` or `read` then give the bytes
        or the error as always. KeyError when absent."""
        key = normalize_name(name).lower()
        info = self._by_name.get(key)
        if info is None:
            raise KeyError(name)
        limits = self.limits
        size = info.file_size
        cap = min(most, limits.max_part_bytes, limits.max_total_inflated - self._inflated)
        if size > cap or (size > _RATIO_FLOOR and size > limits.max_ratio * info.compress_size):
            return None
        data = self._compressed(info)
        if data is None:
            return None
        if info.compress_type == zipfile.ZIP_DEFLATED:
            out = _inflate_into(data, size)
        else:
            out = bytearray(data) if len(data) == size else None
        if out is None or zlib.crc32(out) != info.CRC:
            return None
        self._inflated += size
        self._sizes[key] = size
        return out

    def _compressed(self, info: zipfile.ZipInfo) -> bytes | None:
        """A member's bytes as the zip holds them, when deflated or stored, not encrypted and
        its local header is as zipfile checks it (its name the directory's)."""
        fp = self._zip.fp
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED) or (
            info.flag_bits & _NOT_PLAIN or fp is None
        ):
            return None
        fp.seek(info.header_offset)
        header = fp.read(30)
        if len(header) < 30 or header[:4] != b"PK\x03\x04":
            return None
        name_size = int.from_bytes(header[26:28], "little")
        utf8 = int.from_bytes(header[6:8], "little") & _UTF8_NAME
        try:
            named = fp.read(name_size).decode("utf-8" if utf8 else "cp437")
        except UnicodeError:
            return None
        if named != info.orig_filename:
            return None
        fp.seek(info.header_offset + 30 + name_size + int.from_bytes(header[28:30], "little"))
        data = fp.read(info.compress_size)
        return data if len(data) == info.compress_size else None

    def read(self, name: str) -> bytes:
        """A part's bytes, inflated under the caps. KeyError when the part is absent."""
        return self.read_encrypted(name, None)

    def read_encrypted(self, name: str, password: bytes | None) -> bytes:
        """A part's bytes, encrypted with ZipCrypto, inflated under the caps: zipfile's
        RuntimeError when `password` is wrong. KeyError when the part is absent."""
        info = self._by_name.get(normalize_name(name).lower())
        if info is None:
            raise KeyError(name)
        return b"".join(self._stream(info, password=password))

    def raw(self, name: str) -> RawMember | None:
        """A part as the zip holds it (deflated or stored), once it has inflated whole under
        the caps (inflated now if it was not read yet), for a reader that opens the zip
        itself: the same bytes inflate to the same checked part, without holding it inflated.
        None for another compression method or an encrypted member. KeyError when absent."""
        key = normalize_name(name).lower()
        info = self._by_name.get(key)
        if info is None:
            raise KeyError(name)
        if key not in self._sizes:
            for _ in self._stream(info):  # checked, not kept
                pass
        data = self._compressed(info)
        if data is None:
            return None
        return RawMember(
            normalize_name(info.filename), info.compress_type, info.CRC, data, self._sizes[key]
        )

    def head(self, name: str, size: int = 256 * 1024) -> bytes:
        """The first `size` bytes of a part (a picture's header), inflating no more than that;
        remembered, since one picture is often shown many times. KeyError when absent."""
        info = self._by_name.get(normalize_name(name).lower())
        if info is None:
            raise KeyError(name)
        key = (info.filename, size)
        cached = self._heads.get(key)
        if cached is None:
            chunks, got = [], 0
            for chunk in self._stream(info):
                chunks.append(chunk)
                got += len(chunk)
                if got >= size:
                    break
            cached = self._heads[key] = b"".join(chunks)[:size]
        return cached

    def xml(self, name: str) -> etree._Element:
        """A part parsed as XML (safely). KeyError when the part is absent."""
        return parse_xml(self.read(name), normalize_name(name))

    def xml_or_none(self, name: str) -> etree._Element | None:
        return self.xml(name) if self.has(name) else None

    def rels(self, part: str) -> dict[str, Relationship]:
        """The relationships of `part` (`""` for the package's own), by rId."""
        part = normalize_name(part)
        folder, base = posixpath.split(part)
        rels_name = posixpath.join(folder, "_rels", base + ".rels")
        root = self.xml_or_none(rels_name)
        if root is None:
            return {}
        out: dict[str, Relationship] = {}
        for rel in root.iter(f"{{{NS['pr']}}}Relationship"):
            rid = rel.get("Id", "")
            target = rel.get("Target", "")
            external = rel.get("TargetMode") == "External"
            if not external:
                target = resolve_target(part, target)
            out[rid] = Relationship(rid, rel.get("Type", ""), target, external)
        return out

    def check(self) -> None:
        """Inflate every member once under the caps (declared sizes lie), and refuse DOCTYPEs."""
        for info in self._by_name.values():
            name = normalize_name(info.filename)
            head = b""
            for chunk in self._stream(info):
                if len(head) < 4096:
                    head += chunk[: 4096 - len(head)]
            if name.endswith((".xml", ".rels", ".vml")) and (
                b"<!DOCTYPE" in head or b"<!ENTITY" in head
            ):
                raise CorruptError(f"The {name} part declares a DOCTYPE, which OOXML never needs.")

    def sanitized(self) -> io.BytesIO:
        """A clean in-memory copy: normalised names, each member inflated once under the caps."""
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as clean:
            for info in self._by_name.values():
                clean.writestr(normalize_name(info.filename), b"".join(self._stream(info)))
        out.seek(0)
        return out

    def core_properties(self) -> dict[str, str]:
        """title, subject, description, keywords, creator... from docProps/core.xml."""
        root = self.xml_or_none("docProps/core.xml")
        if root is None:
            return {}
        out: dict[str, str] = {}
        for child in root:
            if not isinstance(child.tag, str):
                continue
            local = etree.QName(child).localname
            text = (child.text or "").strip()
            if text:
                out[local] = text
        return out


def resolve_target(source_part: str, target: str) -> str:
    """A relationship target as a part name, relative to the folder of `source_part`."""
    target = target.replace("\\", "/")
    if target.startswith("/"):
        return posixpath.normpath(target.lstrip("/"))
    folder = posixpath.dirname(normalize_name(source_part))
    return posixpath.normpath(posixpath.join(folder, target)).lstrip("/")
