"""What a picture says of itself: EXIF (date taken, camera, orientation, author, description)
and XMP (title, description, keywords, creator, date created), as the document's properties.

A photo's position (EXIF GPS, XMP `exif:GPS*`) is private: it is read only with
`Limits.keep_location` (`--keep-location`), as `location: {latitude, longitude[, altitude]}`
in decimal degrees (metres). Nothing else of the GPS data is kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from dpe_server.model.tree import JSON

ORIENTATION = 0x0112
_EXIF_IFD, _GPS_IFD = 0x8769, 0x8825
_TAGS = {0x010F: "make", 0x0110: "model", 0x013B: "author", 0x010E: "description"}
_DATES = (0x9003, 0x9004, 0x0132)
"""DateTimeOriginal, DateTimeDigitized (in the Exif IFD), DateTime (in IFD0): the first found
is when it was taken."""
_XMP_FIELDS = {
    "title": "title",
    "description": "description",
    "creator": "author",
    "CreateDate": "taken",
    "DateCreated": "taken",
    "DateTimeOriginal": "taken",
}


@dataclass
class Facts:
    title: str | None = None
    keywords: tuple[str, ...] = ()
    extra: dict[str, JSON] = field(default_factory=dict)


def facts(image: Any, keep_location: bool) -> Facts:
    """The properties of the PIL image `image` (its first frame's EXIF, its XMP)."""
    out = Facts()
    try:
        exif = image.getexif()
    except Exception:  # a broken EXIF block costs its facts, not the picture
        exif = {}
    _from_exif(exif, out.extra, keep_location)
    _from_xmp(_xmp_bytes(image), out)
    return out


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return " ".join(str(value).replace("\0", " ").split())


def _iso(value: Any) -> str:
    """EXIF's `2024:05:01 10:20:30` → `2024-05-01T10:20:30`; other text as it is."""
    text = _text(value)
    found = re.fullmatch(r"(\d{4})[:-](\d\d)[:-](\d\d)[ T](\d\d:\d\d:\d\d)", text)
    return f"{found[1]}-{found[2]}-{found[3]}T{found[4]}" if found else text


def _from_exif(exif: Any, extra: dict[str, JSON], keep_location: bool) -> None:
    if not exif:
        return
    try:
        inner = exif.get_ifd(_EXIF_IFD)
    except Exception:
        inner = {}
    for tag in _DATES:
        value = inner.get(tag) or exif.get(tag)
        if value and _text(value):
            extra["taken"] = _iso(value)
            break
    named = {name: _text(exif.get(tag, "")) for tag, name in _TAGS.items()}
    make, model = named.pop("make"), named.pop("model")
    camera = model if model.lower().startswith(make.lower()) else f"{make} {model}".strip()
    if camera:
        extra["camera"] = camera
    extra.update({k: v for k, v in named.items() if v})
    orientation = exif.get(ORIENTATION)
    if isinstance(orientation, int) and 2 <= orientation <= 8:
        extra["orientation"] = orientation
    if keep_location:
        location = _location(exif)
        if location:
            extra["location"] = location


def _degrees(value: Any, ref: Any) -> float | None:
    try:
        d, m, s = (float(v) for v in value)
    except (TypeError, ValueError, ZeroDivisionError):
        return None
    sign = -1.0 if _text(ref).upper() in ("S", "W") else 1.0
    return round(sign * (d + m / 60 + s / 3600), 6)


def _location(exif: Any) -> dict[str, JSON] | None:
    try:
        gps = exif.get_ifd(_GPS_IFD)
    except Exception:
        return None
    lat, lon = _degrees(gps.get(2), gps.get(1)), _degrees(gps.get(4), gps.get(3))
    if lat is None or lon is None:
        return None
    out: dict[str, JSON] = {"latitude": lat, "longitude": lon}
    try:
        altitude = float(gps[6])
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return out
    out["altitude"] = round(-altitude if gps.get(5) in (1, b"\x01") else altitude, 1)
    return out


def _xmp_bytes(image: Any) -> bytes:
    info = image.info
    for key in ("xmp", "XML:com.adobe.xmp"):
        value = info.get(key)
        if value:
            return value if isinstance(value, bytes) else str(value).encode("utf-8")
    tags = getattr(image, "tag_v2", None)  # TIFF: tag 700
    value = tags.get(700) if tags is not None else None
    return value if isinstance(value, bytes) else b""


def _from_xmp(data: bytes, out: Facts) -> None:
    if not data:
        return
    from lxml import etree

    from dpe_server.extractors.kit.xml import parse_xml

    try:
        root = parse_xml(data.strip(b"\0 \r\n\t"))
    except Exception:  # a broken XMP packet costs its facts
        return
    for el in root.iter():
        if not isinstance(el.tag, str):
            continue
        name = etree.QName(el).localname
        if name == "subject":
            words = [_text(li.text) for li in el.iter() if etree.QName(li).localname == "li"]
            out.keywords = tuple(w for w in words if w)
            continue
        key = _XMP_FIELDS.get(name)
        values = [_text(li.text) for li in el.iter() if etree.QName(li).localname == "li"]
        value = next((v for v in values if v), "") or _text(el.text or "")
        if key is None or not value:
            continue
        if key == "title":
            out.title = out.title or value
        else:
            out.extra.setdefault(key, value)
    for attr_holder in root.iter():  # XMP written as attributes of rdf:Description
        if not isinstance(attr_holder.tag, str):
            continue
        for attr, raw in attr_holder.attrib.items():
            key = _XMP_FIELDS.get(etree.QName(attr).localname)
            if key and key != "title" and _text(raw):
                out.extra.setdefault(key, _text(raw))
