"""A page's path and image objects (PDFium's object list): ruling segments and image draws.

- A path whose bounds are under 2.5 pt thick is one rule along its middle (a thin filled
  rectangle, a stroked line); any other path gives each of its straight, axis-aligned pieces
  (`m`/`l` lines and the sides of `re` rectangles) as a `Segment` when at least 4 pt long.
  Curves only move the current point. At most `MAX_SEGMENTS` segments per page.
- An image object gives a `Draw`: its pixel size and its box on the page.

Form XObjects are entered (at most `MAX_FORM_DEPTH` deep) and their objects mapped through the
form's matrix; at most `MAX_OBJECTS` objects are looked at per page (vector-heavy pages, maps,
charts, stop there).

Speed: the calls made once per object and once per path segment go through private ctypes
prototypes (`prototypes`, as `glyphs` does for words), into ctypes values the walker reuses,
which takes the walk of a page's objects to about 60 % of its time through pypdfium2's
declared ones (tika__testPDF_childAttachments.pdf: 43,000 objects, 18,000 paths). The object
and segment handles are passed as the pointers these prototypes return.
"""

from __future__ import annotations

import ctypes
from typing import Any

import pypdfium2.raw as pdfium_c

from dpe_server.extractors.pdf.items import Draw, PageContent, Segment
from dpe_server.extractors.pdf.prototypes import prototype

MAX_SEGMENTS = 4_000
MAX_OBJECTS = 50_000
MAX_FORM_DEPTH = 4

Matrix = tuple[float, float, float, float, float, float]
_IDENTITY: Matrix = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)


_get_object = prototype("FPDFPage_GetObject", pdfium_c.FPDF_PAGEOBJECT)
_object_type = prototype("FPDFPageObj_GetType", ctypes.c_int)
_object_bounds = prototype("FPDFPageObj_GetBounds", ctypes.c_int)
_object_matrix = prototype("FPDFPageObj_GetMatrix", ctypes.c_int)
_count_segments = prototype("FPDFPath_CountSegments", ctypes.c_int)
_get_segment = prototype("FPDFPath_GetPathSegment", pdfium_c.FPDF_PATHSEGMENT)
_segment_point = prototype("FPDFPathSegment_GetPoint", ctypes.c_int)
_segment_type = prototype("FPDFPathSegment_GetType", ctypes.c_int)
_segment_closes = prototype("FPDFPathSegment_GetClose", ctypes.c_int)
_PATH = pdfium_c.FPDF_PAGEOBJ_PATH
_IMAGE = pdfium_c.FPDF_PAGEOBJ_IMAGE
_FORM = pdfium_c.FPDF_PAGEOBJ_FORM
_MOVETO = pdfium_c.FPDF_SEGMENT_MOVETO
_LINETO = pdfium_c.FPDF_SEGMENT_LINETO


def _mult(inner: Matrix, outer: Matrix) -> Matrix:
    a, b, c, d, e, f = inner
    A, B, C, D, E, F = outer
    return (
        a * A + b * C,
        a * B + b * D,
        c * A + d * C,
        c * B + d * D,
        e * A + f * C + E,
        e * B + f * D + F,
    )


class _Walker:
    def __init__(self, content: PageContent) -> None:
        self.content = content
        self.seen = 0
        self.x = ctypes.c_float()
        self.y = ctypes.c_float()
        self.point_refs = (ctypes.byref(self.x), ctypes.byref(self.y))
        self.box = tuple(ctypes.c_float() for _ in range(4))
        """left, bottom, right, top of an object's bounds."""
        self.box_refs = tuple(ctypes.byref(v) for v in self.box)
        self.m = pdfium_c.FS_MATRIX()
        self.m_ref = ctypes.byref(self.m)

    def bounds(self, obj: Any, outer: Matrix) -> tuple[float, float, float, float] | None:
        """The object's bounds mapped through `outer`: the box around its four corners."""
        if not _object_bounds(obj, *self.box_refs):
            return None
        left, bottom, right, top = (v.value for v in self.box)
        a, b, c, d, e, f = outer
        x0, x1 = a * left + c * bottom + e, a * left + c * top + e
        x2, x3 = a * right + c * bottom + e, a * right + c * top + e
        y0, y1 = b * left + d * bottom + f, b * left + d * top + f
        y2, y3 = b * right + d * bottom + f, b * right + d * top + f
        return min(x0, x1, x2, x3), min(y0, y1, y2, y3), max(x0, x1, x2, x3), max(y0, y1, y2, y3)

    def matrix(self, obj: Any) -> Matrix:
        m = self.m
        if not _object_matrix(obj, self.m_ref):
            return _IDENTITY
        return (m.a, m.b, m.c, m.d, m.e, m.f)

    def segment(self, x0: float, y0: float, x1: float, y1: float) -> None:
        segments = self.content.segments
        if len(segments) >= MAX_SEGMENTS:
            return
        if abs(y1 - y0) < 1.0 and abs(x1 - x0) >= 4.0:
            segments.append(Segment(min(x0, x1), y0, max(x0, x1), y0))
        elif abs(x1 - x0) < 1.0 and abs(y1 - y0) >= 4.0:
            segments.append(Segment(x0, min(y0, y1), x0, max(y0, y1)))

    def path(self, obj: Any, outer: Matrix) -> None:
        bounds = self.bounds(obj, outer)
        if bounds is None:
            return
        x0, y0, x1, y1 = bounds
        if y1 - y0 < 2.5:
            self.segment(x0, (y0 + y1) / 2, x1, (y0 + y1) / 2)
            return
        if x1 - x0 < 2.5:
            self.segment((x0 + x1) / 2, y0, (x0 + x1) / 2, y1)
            return
        a, b, c, d, e, f = _mult(self.matrix(obj), outer)
        x, y = self.x, self.y
        x_ref, y_ref = self.point_refs
        start = point = None
        for i in range(min(_count_segments(obj), 4 * MAX_SEGMENTS)):
            seg = _get_segment(obj, i)
            if not seg or not _segment_point(seg, x_ref, y_ref):
                continue
            px, py = x.value, y.value
            here = (a * px + c * py + e, b * px + d * py + f)
            kind = _segment_type(seg)
            if kind == _MOVETO:
                start = here
            elif kind == _LINETO and point is not None:
                self.segment(*point, *here)
            point = here
            if _segment_closes(seg) and start is not None:
                self.segment(*here, *start)
                point = start

    def image(self, obj: Any, outer: Matrix) -> None:
        w, h = ctypes.c_uint(), ctypes.c_uint()
        bounds = self.bounds(obj, outer)
        if bounds is not None and pdfium_c.FPDFImageObj_GetImagePixelSize(obj, w, h):
            self.content.draws.append(Draw(int(w.value), int(h.value), bounds))

    def walk(self, objects: list[Any], outer: Matrix, depth: int) -> None:
        for obj in objects:
            self.seen += 1
            if self.seen > MAX_OBJECTS:
                return
            kind = _object_type(obj)
            if kind == _PATH:
                self.path(obj, outer)
            elif kind == _IMAGE:
                self.image(obj, outer)
            elif kind == _FORM and depth < MAX_FORM_DEPTH:
                count = pdfium_c.FPDFFormObj_CountObjects(obj)
                children = [pdfium_c.FPDFFormObj_GetObject(obj, i) for i in range(max(0, count))]
                self.walk(children, _mult(self.matrix(obj), outer), depth + 1)


def collect_shapes(page: Any, content: PageContent) -> None:
    """Add the rules and image draws of `page` (a pypdfium2 raw page) to `content`."""
    count = pdfium_c.FPDFPage_CountObjects(page)
    objects = [_get_object(page, i) for i in range(min(count, MAX_OBJECTS))]
    _Walker(content).walk(objects, _IDENTITY, 0)
