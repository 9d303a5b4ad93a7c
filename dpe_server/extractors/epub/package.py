"""An EPUB's package document (OPF): where it is (`META-INF/container.xml`), its Dublin Core
metadata, its manifest and spine, its table of contents (EPUB 3's `nav` document, else
EPUB 2's NCX), its cover, and whether it is DRM-protected (`META-INF/encryption.xml`
encrypting with anything but the font obfuscation algorithms)."""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from urllib.parse import unquote

from lxml import etree

from dpe_server.extractors.kit.package import Package
from dpe_server.extractors.kit.xml import local, parse_xml
from dpe_server.model.errors import CorruptError, EncryptedError

FONT_OBFUSCATION = frozenset(
    {"http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC"}
)
"""What `encryption.xml` may name without the book being protected: obfuscated fonts."""
DUBLIN_CORE = ("title", "creator", "language", "subject", "description", "publisher", "date")


@dataclass(slots=True)
class Item:
    path: str
    media_type: str
    properties: str = ""


@dataclass(slots=True)
class Book:
    opf: str
    version: str
    metadata: dict[str, list[str]] = field(default_factory=dict)
    manifest: dict[str, Item] = field(default_factory=dict)
    spine: list[str] = field(default_factory=list)
    """The chapters' paths in reading order."""
    toc: dict[str, str] = field(default_factory=dict)
    """A chapter's path → its first title in the table of contents."""
    cover: str | None = None


_DOCTYPE = re.compile(rb"<!DOCTYPE[^\[>]*>")


def xml(pkg: Package, path: str) -> etree._Element:
    """A member parsed as XML safely (`kit.xml`): a DOCTYPE naming an external DTD (an NCX's,
    an XHTML's) is dropped unread; one declaring entities of its own is refused."""
    data = pkg.read(path)
    return parse_xml(_DOCTYPE.sub(b"", data[:4096], count=1) + data[4096:], path)


def _children(el: etree._Element, name: str) -> list[etree._Element]:
    return [c for c in el.iter() if local(c) == name]


def _text(el: etree._Element) -> str:
    return " ".join("".join(str(t) for t in el.itertext()).split())


def resolve(base: str, href: str) -> str:
    """A member path from `href` relative to the member `base` (fragment dropped)."""
    href = unquote(href.split("#", 1)[0])
    return posixpath.normpath(posixpath.join(posixpath.dirname(base), href)).lstrip("/")


def check_drm(pkg: Package) -> None:
    if not pkg.has("META-INF/encryption.xml"):
        return
    root = xml(pkg, "META-INF/encryption.xml")
    algorithms = {
        str(m.get("Algorithm") or "") for m in _children(root, "EncryptionMethod")
    } - FONT_OBFUSCATION
    encrypted = len(_children(root, "EncryptedData"))
    if algorithms and encrypted:
        raise EncryptedError(
            f"The e-book is protected by DRM: META-INF/encryption.xml encrypts {encrypted} of "
            f"its resources ({', '.join(sorted(algorithms))}); only the seller's reading app "
            "opens it."
        )


def _opf_path(pkg: Package) -> str:
    if not pkg.has("META-INF/container.xml"):
        raise CorruptError("The e-book has no META-INF/container.xml: it is no EPUB.")
    for rootfile in _children(xml(pkg, "META-INF/container.xml"), "rootfile"):
        path = rootfile.get("full-path")
        if path and pkg.has(path):
            return path
    raise CorruptError("The e-book's container.xml names no package document it holds.")


def _nav_toc(pkg: Package, path: str) -> dict[str, str]:
    """EPUB 3: the `toc` navigation's links (parsed as HTML: it is XHTML)."""
    root = etree.fromstring(pkg.read(path), etree.HTMLParser(no_network=True))
    if root is None:
        return {}
    navs = [n for n in root.iter("nav") if "toc" in (n.get("epub:type") or "")]
    out: dict[str, str] = {}
    for nav in navs or list(root.iter("nav"))[:1]:
        for a in nav.iter("a"):
            href, title = a.get("href"), _text(a)
            if href and title:
                out.setdefault(resolve(path, href), title)
    return out


def _ncx_toc(pkg: Package, path: str) -> dict[str, str]:
    """EPUB 2: the NCX's navigation points, in their order."""
    out: dict[str, str] = {}
    for point in _children(xml(pkg, path), "navPoint"):
        label = next((_text(t) for t in _children(point, "text")), "")
        content = next((c.get("src") for c in point if local(c) == "content"), None)
        if content and label:
            out.setdefault(resolve(path, content), label)
    return out


def read_book(pkg: Package) -> Book:
    check_drm(pkg)
    opf = _opf_path(pkg)
    root = xml(pkg, opf)
    book = Book(opf, root.get("version") or "")
    for name in DUBLIN_CORE:
        values = [_text(e) for e in _children(root, name) if _text(e)]
        if values:
            book.metadata[name] = values
    for item in _children(root, "item"):
        href, ident = item.get("href"), item.get("id")
        if href and ident:
            book.manifest[ident] = Item(
                resolve(opf, href), item.get("media-type") or "", item.get("properties") or ""
            )
    spine = next(iter(_children(root, "spine")), None)
    for ref in [] if spine is None else _children(spine, "itemref"):
        found = book.manifest.get(ref.get("idref") or "")
        if found is not None and pkg.has(found.path):
            book.spine.append(found.path)
    nav = next((i for i in book.manifest.values() if "nav" in i.properties.split()), None)
    ncx = book.manifest.get(spine.get("toc") or "") if spine is not None else None
    if nav is not None and pkg.has(nav.path):
        book.toc = _nav_toc(pkg, nav.path)
    if not book.toc and ncx is not None and pkg.has(ncx.path):
        book.toc = _ncx_toc(pkg, ncx.path)
    cover = next((i for i in book.manifest.values() if "cover-image" in i.properties), None)
    if cover is None:  # EPUB 2: <meta name="cover" content="{item id}">
        ident = next(
            (m.get("content") for m in _children(root, "meta") if m.get("name") == "cover"), None
        )
        cover = book.manifest.get(ident or "")
    book.cover = cover.path if cover is not None and pkg.has(cover.path) else None
    return book
