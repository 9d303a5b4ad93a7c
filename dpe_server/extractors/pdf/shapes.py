"""A page's path and image objects (PDFium's object list): ruling segments and image draws.

- A path whose bounds are under 2.5 pt thick is one rule along its middle (a thin filled
  rectangle, a stroked line); any other path gives each of its straight, axis-aligned pieces
  (`m`/`l` lines and the sides of `re` rectangles) as a `Segment` when at least 4 pt long.
  Curves only move the current point. At most `MAX_SEGMENTS` segments per page.
- An image object gives a `Draw`: its pixel size and its box on the page.

Form XObjects are entered (at most `MAX_FORM_DEPTH` deep) and their objects mapped through the
form's matrix; at most `MAX_OBJECTS` objects are looked at per page (vector-heavy pages, maps,
charts, stop there).
"""

from __future__ import annotations

import ctypes
from typing import Any

import pypdfium2.raw as pdfium_c

from dpe_server.extractors.pdf.items import Draw, PageContent, Segment

MAX_SEGMENTS = 4_000
MAX_OBJECTS = 50_000
MAX_FORM_DEPTH = 4

Matrix = tuple[float, float, float, float, float, float]
_IDENTITY: Matrix = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)


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


def _apply(m: Matrix, x: float, y: float) -> tuple[float, float]:
    return m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5]


def _matrix(obj: Any) -> Matrix:
    m = pdfium_c.FS_MATRIX()
    if not pdfium_c.FPDFPageObj_GetMatrix(obj, m):
        return _IDENTITY
    return (m.a, m.b, m.c, m.d, m.e, m.f)


def _bounds(obj: Any, outer: Matrix) -> tuple[float, float, float, float] | None:
    left, bottom, right, top = (ctypes.c_float() for _ in range(4))
    if not pdfium_c.FPDFPageObj_GetBounds(obj, left, bottom, right, top):
        return None
    corners = [
        _apply(outer, x, y) for x in (left.value, right.value) for y in (bottom.value, top.value)
    ]
    xs = [c[0] for c in corners]
    ys = [c[1] for c in corners]
    return min(xs), min(ys), max(xs), max(ys)


class _Walker:
    def __init__(self, content: PageContent) -> None:
        self.content = content
        self.seen = 0
        self.x = ctypes.c_float()
        self.y = ctypes.c_float()

    def segment(self, x0: float, y0: float, x1: float, y1: float) -> None:
        segments = self.content.segments
        if len(segments) >= MAX_SEGMENTS:
            return
        if abs(y1 - y0) < 1.0 and abs(x1 - x0) >= 4.0:
            segments.append(Segment(min(x0, x1), y0, max(x0, x1), y0))
        elif abs(x1 - x0) < 1.0 and abs(y1 - y0) >= 4.0:
            segments.append(Segment(x0, min(y0, y1), x0, max(y0, y1)))

    def path(self, obj: Any, outer: Matrix) -> None:
        bounds = _bounds(obj, outer)
        if bounds is None:
            return
        x0, y0, x1, y1 = bounds
        if y1 - y0 < 2.5:
            self.segment(x0, (y0 + y1) / 2, x1, (y0 + y1) / 2)
            return
        if x1 - x0 < 2.5:
            self.segment((x0 + x1) / 2, y0, (x0 + x1) / 2, y1)
            return
        m = _mult(_matrix(obj), outer)
        start = point = None
        for i in range(min(pdfium_c.FPDFPath_CountSegments(obj), 4 * MAX_SEGMENTS)):
            seg = pdfium_c.FPDFPath_GetPathSegment(obj, i)
            if not seg or not pdfium_c.FPDFPathSegment_GetPoint(seg, self.x, self.y):
                continue
            here = _apply(m, self.x.value, self.y.value)
            kind = pdfium_c.FPDFPathSegment_GetType(seg)
            if kind == pdfium_c.FPDF_SEGMENT_MOVETO:
                start = here
            elif kind == pdfium_c.FPDF_SEGMENT_LINETO and point is not None:
                self.segment(*point, *here)
            point = here
            if pdfium_c.FPDFPathSegment_GetClose(seg) and start is not None:
                self.segment(*here, *start)
                point = start

    def image(self, obj: Any, outer: Matrix) -> None:
        w, h = ctypes.c_uint(), ctypes.c_uint()
        bounds = _bounds(obj, outer)
        if bounds is not None and pdfium_c.FPDFImageObj_GetImagePixelSize(obj, w, h):
            self.content.draws.append(Draw(int(w.value), int(h.value), bounds))

    def walk(self, objects: list[Any], outer: Matrix, depth: int) -> None:
        for obj in objects:
            self.seen += 1
            if self.seen > MAX_OBJECTS:
                return
            kind = pdfium_c.FPDFPageObj_GetType(obj)
            if kind == pdfium_c.FPDF_PAGEOBJ_PATH:
                self.path(obj, outer)
            elif kind == pdfium_c.FPDF_PAGEOBJ_IMAGE:
                self.image(obj, outer)
            elif kind == pdfium_c.FPDF_PAGEOBJ_FORM and depth < MAX_FORM_DEPTH:
                count = pdfium_c.FPDFFormObj_CountObjects(obj)
                children = [pdfium_c.FPDFFormObj_GetObject(obj, i) for i in range(max(0, count))]
                self.walk(children, _mult(_matrix(obj), outer), depth + 1)


def collect_shapes(page: Any, content: PageContent) -> None:
    """Add the rules and image draws of `page` (a pypdfium2 raw page) to `content`."""
    count = pdfium_c.FPDFPage_CountObjects(page)
    objects = [pdfium_c.FPDFPage_GetObject(page, i) for i in range(min(count, MAX_OBJECTS))]
    _Walker(content).walk(objects, _IDENTITY, 0)
