"""Rules and image draws read from a page's objects (pdf/shapes.py), on a page drawn with
reportlab: thin lines, the sides of rectangles and of other paths, a form XObject mapped
through its matrix, and an image's pixel size and box."""

from __future__ import annotations

import io

import pypdfium2
from PIL import Image
from reportlab.lib.utils import ImageReader
from reportlab.pdfgen import canvas

from dpe_server.extractors.pdf.items import Draw, PageContent, Segment
from dpe_server.extractors.pdf.shapes import collect_shapes


def _page_pdf() -> bytes:
    buf = io.BytesIO()
    c = canvas.Canvas(buf, pagesize=(600, 800))
    c.setLineWidth(1)
    c.line(100, 700, 400, 700)  # a thin path: one rule along its middle
    c.rect(100, 500, 200, 100, stroke=1, fill=0)  # four sides
    triangle = c.beginPath()
    triangle.moveTo(350, 400)
    triangle.lineTo(450, 400)
    triangle.lineTo(450, 480)
    triangle.close()  # the closing side is slanted: no rule
    c.drawPath(triangle, stroke=1, fill=0)
    c.beginForm("rules")
    c.line(0, 0, 200, 0)
    c.line(0, 0, 0, 100)
    c.rect(10, 10, 60, 30, stroke=1, fill=0)
    c.endForm()
    c.saveState()
    c.translate(50, 100)
    c.scale(0.5, 1)
    c.doForm("rules")
    c.restoreState()
    c.drawImage(ImageReader(Image.new("RGB", (10, 8), "red")), 300, 300, 50, 40)
    c.showPage()
    c.save()
    return buf.getvalue()


def test_rules_and_image_draws_of_a_page() -> None:
    pdf = pypdfium2.PdfDocument(_page_pdf())
    page = pdf[0]
    content = PageContent()
    collect_shapes(page.raw, content)
    page.close()
    pdf.close()
    assert content.segments == [
        Segment(99.0, 700.0, 401.0, 700.0),  # the stroke's bounds: its caps' half width
        Segment(100.0, 500.0, 300.0, 500.0),
        Segment(300.0, 500.0, 300.0, 600.0),
        Segment(100.0, 600.0, 300.0, 600.0),
        Segment(100.0, 500.0, 100.0, 600.0),
        Segment(350.0, 400.0, 450.0, 400.0),
        Segment(450.0, 400.0, 450.0, 480.0),
        Segment(49.5, 100.0, 150.5, 100.0),  # the form's, scaled by half across, moved
        Segment(50.0, 99.0, 50.0, 201.0),
        Segment(55.0, 110.0, 85.0, 110.0),
        Segment(85.0, 110.0, 85.0, 140.0),
        Segment(55.0, 140.0, 85.0, 140.0),
        Segment(55.0, 110.0, 55.0, 140.0),
    ]
    assert content.draws == [Draw(10, 8, (300.0, 300.0, 350.0, 340.0))]
