"""Private ctypes prototypes of the PDFium calls made per word, per text object, per page
object and per path segment (`glyphs`, `shapes`).

pypdfium2's own prototypes declare argument types and wrap the pointers they return; these
are separate function objects of the same library that declare no argument types (unless
given), which halves the cost of a call. So every caller passes exactly the C types: handles
as the pointers these prototypes return (or a `ctypes.c_void_p`), an index as a Python int (a
C int), an output by `ctypes.byref` of a value it reuses.
"""

from __future__ import annotations

from typing import Any

from pypdfium2_raw.bindings import _libs


def prototype(name: str, restype: Any, argtypes: tuple[Any, ...] | None = None) -> Any:
    """A private prototype of PDFium's `name`, apart from pypdfium2's."""
    function = _libs["pdfium"][name]
    function.restype = restype
    if argtypes is not None:
        function.argtypes = argtypes
    return function
