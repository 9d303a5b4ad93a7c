"""Strict OOXML (ISO/IEC 29500 Strict, `http://purl.oclc.org/ooxml/...` namespaces) read as
Transitional: the element vocabulary is the same, only the namespace URIs differ, so the URIs
are mapped before parsing and one walker reads both (docx and pptx)."""

from __future__ import annotations

from dpe_server.extractors.kit.package import NS

STRICT_MARK = b"http://purl.oclc.org/ooxml/"

_OPENXML = "http://schemas.openxmlformats.org/"
# Strict → Transitional, longest first so no URI is rewritten through a shorter prefix.
_STRICT_MAP: tuple[tuple[bytes, bytes], ...] = tuple(
    sorted(
        (
            (STRICT_MARK + strict.encode(), transitional.encode())
            for strict, transitional in {
                "wordprocessingml/main": _OPENXML + "wordprocessingml/2006/main",
                "presentationml/main": _OPENXML + "presentationml/2006/main",
                "officeDocument/relationships": NS["r"],
                "officeDocument/math": NS["m"],
                "officeDocument/sharedTypes": _OPENXML + "officeDocument/2006/sharedTypes",
                "drawingml/main": NS["a"],
                "drawingml/chart": NS["c"],
                "drawingml/diagram": NS["dgm"],
                "drawingml/picture": _OPENXML + "drawingml/2006/picture",
                "drawingml/wordprocessingDrawing": (
                    _OPENXML + "drawingml/2006/wordprocessingDrawing"
                ),
                "drawingml/chartDrawing": _OPENXML + "drawingml/2006/chartDrawing",
            }.items()
        ),
        key=lambda pair: -len(pair[0]),
    )
)


def from_strict(data: bytes) -> bytes:
    """Strict OOXML namespace URIs rewritten to their Transitional twins (else unchanged)."""
    if STRICT_MARK not in data:
        return data
    for strict, transitional in _STRICT_MAP:
        data = data.replace(strict, transitional)
    return data
