"""Image XObjects on a page (also inside form XObjects) and alt text from the structure tree.

Images are found by walking the page's /Resources /XObject dictionaries (recursing into form
XObjects' own resources, at most `MAX_FORM_DEPTH` deep), never by decoding them: width and
height come from /Width and /Height, the mime type from the last filter (DCTDecode →
image/jpeg, JPXDecode → image/jp2, anything else is served converted, so image/png). Image
masks and images under 4 × 4 pixels (spacers) are skipped.

`read_image` gives a Level 3 picture's bytes (JPEG passed through, others converted to png
by pypdf) from the image's stream reference kept in the element's `metadata.ref`.

Alt text: in a tagged PDF, /Figure structure elements carry /Alt and the page they are on
(/Pg, inherited from their parents). The structure tree is walked once per document (at most
`MAX_STRUCT_NODES` nodes) and each page's alt texts are given to its images in order: a cheap
approximation of following marked-content ids.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pypdf import PageObject, PdfReader
from pypdf.generic import ArrayObject, DictionaryObject, IndirectObject, StreamObject

from dpe_server.extractors.pdf.collect import plain

MAX_FORM_DEPTH = 4
MAX_IMAGES = 500
MAX_STRUCT_NODES = 20_000

_MIME = {"/DCTDecode": "image/jpeg", "/JPXDecode": "image/jp2"}


@dataclass(frozen=True, slots=True)
class ImageInfo:
    name: str
    width: int
    height: int
    mime_type: str
    ref: str
    """`obj gen` of the image stream: where a Level 3 read finds its bytes."""


def _mime(obj: DictionaryObject) -> str:
    filters = obj.get("/Filter")
    filters = filters.get_object() if filters is not None else None
    last = filters[-1] if isinstance(filters, ArrayObject) and filters else filters
    return _MIME.get(str(last), "image/png")


def _int(value: Any) -> int:
    value = value.get_object() if isinstance(value, IndirectObject) else value
    return int(value) if isinstance(value, (int, float)) else 0


def page_images(page: PageObject) -> tuple[list[ImageInfo], bool]:
    """The images a page's resources hold, in resource order; and whether a cap stopped us."""
    found: list[ImageInfo] = []
    seen: set[tuple[int, int]] = set()
    truncated = False

    def walk(resources: Any, depth: int) -> None:
        nonlocal truncated
        resources = resources.get_object() if resources is not None else None
        if not isinstance(resources, DictionaryObject):
            return
        xobjects = resources.get("/XObject")
        xobjects = xobjects.get_object() if xobjects is not None else None
        if not isinstance(xobjects, DictionaryObject):
            return
        for name, ref in xobjects.items():
            if len(found) >= MAX_IMAGES:
                truncated = True
                return
            key = (ref.idnum, ref.generation) if isinstance(ref, IndirectObject) else None
            if key is not None:
                if key in seen:
                    continue
                seen.add(key)
            obj = ref.get_object()
            if not isinstance(obj, DictionaryObject):
                continue
            subtype = obj.get("/Subtype")
            if subtype == "/Image":
                if obj.get("/ImageMask") in (True, "true"):
                    continue
                width, height = _int(obj.get("/Width")), _int(obj.get("/Height"))
                if width < 4 or height < 4:
                    continue
                where = f"{key[0]} {key[1]}" if key else ""
                found.append(ImageInfo(str(name), width, height, _mime(obj), where))
            elif subtype == "/Form" and depth < MAX_FORM_DEPTH:
                walk(obj.get("/Resources"), depth + 1)

    walk(page.get("/Resources"), 0)
    return found, truncated


def alt_texts(reader: PdfReader) -> dict[int, list[str]]:
    """Page index → the /Alt texts of its /Figure structure elements, in tree order."""
    root = reader.root_object.get("/StructTreeRoot")
    root = root.get_object() if root is not None else None
    if not isinstance(root, DictionaryObject):
        return {}
    out: dict[int, list[str]] = {}
    stack: list[tuple[Any, Any]] = [(root.get("/K"), None)]
    visited = 0
    while stack and visited < MAX_STRUCT_NODES:
        node, page_ref = stack.pop()
        visited += 1
        node = node.get_object() if isinstance(node, IndirectObject) else node
        if isinstance(node, ArrayObject):
            stack.extend((child, page_ref) for child in reversed(node))
            continue
        if not isinstance(node, DictionaryObject):
            continue
        page_ref = (
            node.get("/Pg", page_ref) if isinstance(node.get("/Pg"), IndirectObject) else page_ref
        )
        if node.get("/S") == "/Figure" and node.get("/Alt") is not None:
            index = reader._get_page_number_by_indirect(page_ref) if page_ref else None
            if isinstance(index, int) and index >= 0:
                out.setdefault(index, []).append(" ".join(plain(str(node["/Alt"])).split()))
        kids = node.get("/K")
        if kids is not None:
            stack.append((kids, page_ref))
    return out


_SHOWN = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif"}


def read_image(reader: PdfReader, ref: str, max_bytes: int) -> tuple[bytes, str] | None:
    """The bytes of the image stream `ref` ("obj gen") as png or jpeg, or None.

    JPEG streams are passed through; other images are converted to png by pypdf (with
    Pillow; without it, None). Images whose encoded stream or result is over `max_bytes`
    give None.
    """
    try:
        idnum, generation = (int(part) for part in ref.split())
    except ValueError:
        return None
    obj = IndirectObject(idnum, generation, reader).get_object()
    if not isinstance(obj, StreamObject) or obj.get("/Subtype") != "/Image":
        return None
    if _int(obj.get("/Length")) > max_bytes:
        return None
    filters = obj.get("/Filter")
    filters = filters.get_object() if filters is not None else None
    names = [str(x) for x in filters] if isinstance(filters, ArrayObject) else [str(filters)]
    if names == ["/DCTDecode"]:
        data = bytes(obj._data)  # the JPEG file itself, not decoded
        mime = "image/jpeg"
    else:
        try:
            from pypdf.generic._image_xobject import _xobj_to_image
        except ImportError:
            return None
        ext, data, _ = _xobj_to_image(obj)
        mime = _SHOWN.get((ext or "").lower(), "")
        if not mime:
            return None
    return (data, mime) if len(data) <= max_bytes else None
