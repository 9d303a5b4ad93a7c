"""The .zip extractor: one page listing the archive's members (folders left out), each a
link element (`kind: member`: its name, media type and size). A member the server may serve
is listed in `metadata.children`; one it may not is listed with the reason (`error`) and
never read: a name that leaves the archive (`../`, an absolute or a drive path), one
compressed more than `MAX_RATIO` to 1, or past the caps. Members past `Limits.max_members`
are not listed (the page says `truncated`).

A member is read (`member`) through the kit's guarded zip reader: inflated in memory under
the part and total caps and the ratio, never written to disk; an encrypted one (ZipCrypto)
with the passwords given for the file."""

from __future__ import annotations

import dataclasses
import functools
import mimetypes
import zipfile
import zlib
from collections.abc import Callable, Iterator, Sequence
from typing import BinaryIO

from dpe_server.extractors.base import Extractor, Limits
from dpe_server.extractors.kit.package import Package, directory
from dpe_server.extractors.passwords import HOW_TO_GIVE, candidates
from dpe_server.model import summaries
from dpe_server.model.errors import (
    CorruptError,
    EncryptedError,
    TooLargeError,
    UnsupportedError,
)
from dpe_server.model.tree import JSON, Category, Document, Page, PageBuilder, Properties

MAX_RATIO = 100.0
"""A member inflating to more than this many times its compressed size is a zip bomb's."""
_RATIO_FLOOR = 1024 * 1024
"""Members smaller than this are never refused for their ratio (text compresses well)."""
TITLE = "Members"


def unsafe(name: str) -> str:
    """Why a member name may not name a document ("" when it may)."""
    parts = name.replace("\\", "/").split("/")
    if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        return "its name is an absolute path"
    if ".." in parts:
        return "its name leaves the archive (`..`)"
    if "\0" in name:
        return "its name holds a NUL byte"
    return ""


def _refusal(info: zipfile.ZipInfo, limits: Limits) -> str:
    why = unsafe(info.filename)
    if why:
        return why
    if info.file_size > _RATIO_FLOOR and info.file_size > MAX_RATIO * max(info.compress_size, 1):
        return f"it is compressed more than {MAX_RATIO:.0f} to 1, as a zip bomb is"
    if info.file_size > limits.max_part_bytes:
        return f"it inflates past {limits.max_part_bytes // (1024 * 1024)} MiB"
    return ""


def _document(f: BinaryIO, limits: Limits) -> Document:
    infos = [i for i in directory(f, "zip") if not i.is_dir()]
    b = PageBuilder(0, limits.max_elements_per_page)
    children: list[JSON] = []
    cut = len(infos) > limits.max_members
    for info in infos[: limits.max_members]:
        name = info.filename
        mime = mimetypes.guess_type(name.rpartition("/")[2])[0] or "application/octet-stream"
        link: dict[str, JSON] = {"text": name, "url": name, "kind": "member", "name": name}
        link |= {"mime_type": mime, "size": info.file_size}
        meta: dict[str, JSON] = {}
        why = _refusal(info, limits)
        if why:
            meta["error"] = f"Not read: {why}."
        else:
            meta["child"] = name
            children.append({"path": name, "name": name, "mime_type": mime, "size": info.file_size})
        if info.flag_bits & 1:
            link["encrypted"] = True
        b.add(Category.LINK, summaries.link(name, name), link, meta)
    page = b.build(TITLE, {"members": len(infos), **({"truncated": True} if cut else {})})
    meta_doc: dict[str, JSON] = {"children": children} if children else {}
    if page.metadata.get("truncated"):
        meta_doc["truncated"] = True
    return Document(Properties(1, page_titles=(TITLE,)), (page,), meta_doc)


def member(f: BinaryIO, path: str, limits: Limits) -> bytes:
    """The bytes of the member `path`, inflated in memory under the caps; KeyError if none."""
    for _, read in members(f, (path,), limits):
        return read()
    raise KeyError(path)


def members(
    f: BinaryIO, paths: Sequence[str], limits: Limits
) -> Iterator[tuple[str, Callable[[], bytes]]]:
    """`member` for each of `paths`, the archive's directory read once."""
    # The archive's member count was capped when it was listed; the ratio is the archive's.
    package_limits = dataclasses.replace(limits, max_members=2**31, max_ratio=MAX_RATIO)
    f.seek(0)
    with Package(f, "zip", package_limits) as package:
        for path in paths:
            yield path, functools.partial(_read, package, path, limits)


def _read(package: Package, path: str, limits: Limits) -> bytes:
    if unsafe(path):  # never looked up: the kit's names lose a leading slash
        raise UnsupportedError(f"The member {path} is not read: {unsafe(path)}.")
    info = package.info(path)
    if info is None or info.filename != path or info.is_dir():
        raise KeyError(path)
    why = _refusal(info, limits)
    if why:
        raise TooLargeError(f"The member {path} is not read: {why}.")
    if not info.flag_bits & 1:
        return package.read(path)
    for password in candidates(""):
        if not password:
            continue
        try:
            return package.read_encrypted(path, password.encode("utf-8"))
        except (RuntimeError, CorruptError, zlib.error):
            continue  # a wrong password (ZipCrypto's check byte lets one in 256 through)
    raise EncryptedError(f"The member {path} is encrypted: {HOW_TO_GIVE}.")


def probe(f: BinaryIO, limits: Limits) -> Properties:
    return Properties(1, page_titles=(TITLE,))


def extract(f: BinaryIO, limits: Limits) -> Document:
    return _document(f, limits)


def extract_pages(f: BinaryIO, indices: Sequence[int], limits: Limits) -> list[Page]:
    return list(_document(f, limits).pages) if 0 in indices else []


ZIP = Extractor(probe, extract, extract_pages)
