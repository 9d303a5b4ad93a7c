"""What a file is, in words and in media types: an OOXML package by its part folder
(`PACKAGE_KINDS`), an OpenDocument package by its `mimetype` (`MIMETYPES`), a picture by its
magic bytes or its name (`image_mime`), audio and video by the name's extension
(`MEDIA_MIME`)."""

from __future__ import annotations

PACKAGE_KINDS: dict[str, str] = {}
"""The registered OOXML formats' part folders and what a package of each is (`xl/`: an Excel
workbook), filled by `registry.register`: `kit.zips` names a renamed package from what the
registry hands it, importing no format."""

MIMETYPES = {
    "application/vnd.oasis.opendocument.text": "an OpenDocument text",
    "application/vnd.oasis.opendocument.text-template": "an OpenDocument text template",
    "application/vnd.oasis.opendocument.presentation": "an OpenDocument presentation",
    "application/vnd.oasis.opendocument.presentation-template": (
        "an OpenDocument presentation template"
    ),
    "application/vnd.oasis.opendocument.spreadsheet": "an OpenDocument spreadsheet",
    "application/vnd.oasis.opendocument.graphics": "an OpenDocument drawing",
}


MEDIA_MIME = {
    "mp4": "video/mp4",
    "m4v": "video/mp4",
    "mov": "video/quicktime",
    "wmv": "video/x-ms-wmv",
    "avi": "video/x-msvideo",
    "mpg": "video/mpeg",
    "mpeg": "video/mpeg",
    "webm": "video/webm",
    "mkv": "video/x-matroska",
    "swf": "application/x-shockwave-flash",
    "mp3": "audio/mpeg",
    "wav": "audio/wav",
    "m4a": "audio/mp4",
    "wma": "audio/x-ms-wma",
    "aac": "audio/aac",
    "ogg": "audio/ogg",
    "mid": "audio/midi",
    "midi": "audio/midi",
    "aif": "audio/aiff",
    "aiff": "audio/aiff",
}


_EXT_MIME = {
    "png": "image/png",
    "jpg": "image/jpeg",
    "jpeg": "image/jpeg",
    "jpe": "image/jpeg",
    "jfif": "image/jpeg",
    "gif": "image/gif",
    "webp": "image/webp",
    "bmp": "image/bmp",
    "dib": "image/bmp",
    "tif": "image/tiff",
    "tiff": "image/tiff",
    "emf": "image/emf",
    "emz": "image/x-emz",
    "wmf": "image/wmf",
    "wmz": "image/x-wmz",
    "svg": "image/svg+xml",
    "ico": "image/x-icon",
    "heic": "image/heic",
    "avif": "image/avif",
    "pict": "image/pict",
    "pct": "image/pict",
}


def image_mime(part_name: str, head: bytes = b"") -> str:
    """The mime type from magic bytes when they tell, else from the part name's extension."""
    magic = magic_mime(head)
    if magic:
        return magic
    ext = part_name.rsplit(".", 1)[-1].lower() if "." in part_name else ""
    return _EXT_MIME.get(ext, "application/octet-stream")


def magic_mime(head: bytes) -> str | None:
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    if head.startswith(b"BM") and len(head) >= 18:
        return "image/bmp"
    if head.startswith((b"II*\x00", b"MM\x00*")):
        return "image/tiff"
    if head[:4] == b"\x01\x00\x00\x00" and head[40:44] == b" EMF":
        return "image/emf"
    if head.startswith((b"\xd7\xcd\xc6\x9a", b"\x01\x00\x09\x00", b"\x02\x00\x09\x00")):
        return "image/wmf"
    text = head[:1024].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if text.startswith(b"<svg") or (text.startswith(b"<?xml") and b"<svg" in text):
        return "image/svg+xml"
    return None
