"""One in-process measurement, run in a fresh child process by `run.py`.

    python bench/inproc.py NAME PATH [ARG]

Imports first (not timed), then times one call of NAME on PATH and prints one JSON line:
`{"seconds": s, "cpu": s, "peak_mb": m, "note": ...}` where `peak_mb` is the peak resident
size of this process (VmHWM, imports included) and of its largest finished child, if any. Both
sides of every comparison run through here, so they are measured the same way.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# ---- the bare libraries ----------------------------------------------------------------------


def bare_xlsx(path: Path, _arg: str) -> str:
    from python_calamine import CalamineWorkbook

    wb = CalamineWorkbook.from_path(str(path))
    cells = 0
    for name in wb.sheet_names:
        rows = wb.get_sheet_by_name(name).to_python()
        cells += sum(len(r) for r in rows)
    return f"{cells} cells"


def bare_pdf(path: Path, _arg: str) -> str:
    from pypdf import PdfReader

    reader = PdfReader(str(path))
    chars = sum(len(page.extract_text()) for page in reader.pages)
    return f"{len(reader.pages)} pages, {chars} chars"


def bare_pdfium(path: Path, _arg: str) -> str:
    import pypdfium2

    pdf = pypdfium2.PdfDocument(str(path))
    chars = 0
    for index in range(len(pdf)):
        page = pdf[index]
        textpage = page.get_textpage()
        chars += len(textpage.get_text_range())
        textpage.close()
        page.close()
    pages = len(pdf)
    pdf.close()
    return f"{pages} pages, {chars} chars"


def pdfium_calls(path: Path, _arg: str) -> str:
    """The floor of `dpe_extract` on a pdf: the calls into PDFium the extractor makes and
    nothing around them. Per page: the page, its text page and whole text (as `bare_pdfium`),
    the page's box and annotation count; per word (the extractor's word pattern) its first
    and last glyphs' text objects and loose boxes; per text object the five calls of its
    style (font, matrix, font size, loose box, origin); per page object its type, and a
    path's bounds. All through the extractor's own ctypes prototypes; no run, line, block or
    tree is built, so `dpe_extract` can come no closer to `bare_pdfium` than this while it
    measures every word through ctypes. It models the bench's files (no form XObjects, no
    thick paths, nothing to compose or normalise)."""
    import ctypes

    import pypdfium2
    import pypdfium2.raw as pdfium_c

    from dpe_server.extractors.pdf import glyphs, shapes

    text_object, loose_box = glyphs._text_object, glyphs._loose_box
    box, matrix = pdfium_c.FS_RECTF(), pdfium_c.FS_MATRIX()
    box_ref, matrix_ref = ctypes.byref(box), ctypes.byref(matrix)
    x, y = ctypes.c_double(), ctypes.c_double()
    x_ref, y_ref = ctypes.byref(x), ctypes.byref(y)
    bounds = tuple(ctypes.c_float() for _ in range(4))
    bounds_refs = tuple(ctypes.byref(v) for v in bounds)
    pdf = pypdfium2.PdfDocument(str(path))
    words = objects = 0
    for index in range(len(pdf)):
        page = pdf[index]
        textpage = pdfium_c.FPDFText_LoadPage(page.raw)
        count = pdfium_c.FPDFText_CountChars(textpage)
        units = (ctypes.c_ushort * (count + 1))()
        pdfium_c.FPDFText_GetText(textpage, 0, count, units)
        codes = ctypes.string_at(units, 2 * count).decode("utf-16-le", "surrogatepass")
        tp = ctypes.cast(textpage, ctypes.c_void_p)
        styled: set[int] = set()
        for match in glyphs._WORD.finditer(codes):
            k0, k1 = match.span()
            k1 -= 1
            obj = text_object(tp, k0)
            text_object(tp, k1)
            loose_box(tp, k0, box_ref)
            loose_box(tp, k1, box_ref)
            words += 1
            if obj not in styled:
                styled.add(obj)
                glyphs._object_font(obj)
                glyphs._char_matrix(tp, k0, matrix_ref)
                glyphs._font_size(tp, k0)
                loose_box(tp, k0, box_ref)
                glyphs._char_origin(tp, k0, x_ref, y_ref)
        objects += len(styled)
        pdfium_c.FPDFText_ClosePage(textpage)
        for i in range(pdfium_c.FPDFPage_CountObjects(page.raw)):
            item = shapes._get_object(page.raw, i)
            if shapes._object_type(item) == shapes._PATH:
                shapes._object_bounds(item, *bounds_refs)
        pdfium_c.FPDF_GetPageBoundingBox(page.raw, box)
        pdfium_c.FPDFPage_GetAnnotCount(page.raw)
        page.close()
    pages = len(pdf)
    pdf.close()
    return f"{pages} pages, {words} words, {objects} text objects"


def bare_pdf_page(path: Path, arg: str) -> str:
    from pypdf import PdfReader

    text = PdfReader(str(path)).pages[int(arg)].extract_text()
    return f"page {arg}: {len(text)} chars"


def _shape_text(shape: Any) -> int:
    chars = 0
    if shape.shape_type is not None and shape.shape_type == 6:  # MSO_SHAPE_TYPE.GROUP
        return sum(_shape_text(s) for s in shape.shapes)
    if shape.has_text_frame:
        chars += len(shape.text_frame.text)
    if getattr(shape, "has_table", False) and shape.has_table:
        chars += sum(len(c.text) for row in shape.table.rows for c in row.cells)
    return chars


def bare_pptx(path: Path, _arg: str) -> str:
    from pptx import Presentation

    deck = Presentation(str(path))
    chars = 0
    for slide in deck.slides:
        chars += sum(_shape_text(s) for s in slide.shapes)
        if slide.has_notes_slide:
            chars += len(slide.notes_slide.notes_text_frame.text)
    return f"{len(deck.slides)} slides, {chars} chars"


def bare_docx(path: Path, _arg: str) -> str:
    from docx import Document

    doc = Document(str(path))
    chars = sum(len(p.text) for p in doc.paragraphs)
    for table in doc.tables:
        chars += sum(len(c.text) for row in table.rows for c in row.cells)
    return f"{chars} chars"


def bare_docx_paragraphs(path: Path, _arg: str) -> str:
    from docx import Document

    doc = Document(str(path))
    return f"{sum(len(p.text) for p in doc.paragraphs)} chars"


# ---- dpe-server ------------------------------------------------------------------------------


def dpe_extract(path: Path, _arg: str) -> str:
    from dpe_server.extractors import DEFAULT_LIMITS, for_path

    extractor = for_path(path)
    assert extractor is not None
    with path.open("rb") as fh:
        doc = extractor.extract(fh, DEFAULT_LIMITS)
    return f"{len(doc.pages)} pages, {sum(len(p.elements) for p in doc.pages)} elements"


def dpe_element(path: Path, arg: str) -> str:
    """Level 3 of the first element of page `arg`, uncached, through `DpeApp.read`.

    PATH is a folder holding the one pdf. The catalog is started (listed from a cheap probe)
    before the clock starts; the timed read extracts the page in a worker, as the server does.
    """
    import anyio

    return str(anyio.run(_dpe_element, path, int(arg)))


async def _dpe_element(root: Path, index: int) -> str:
    import tempfile

    from dpe_server.model.tree import Category
    from dpe_server.surface.app import DpeApp, Settings

    with tempfile.TemporaryDirectory(dir=root.parent) as cache:
        app = DpeApp(Settings(root=root, watch=False, warm=False, cache_dir=Path(cache)))
        await app.catalog.start()
        ref = app.catalog.entries()[0].doc_ref
        # Element ids name their page; the first element of a text page is text or a heading.
        start = time.perf_counter()
        for abbr in (c.abbr for c in (Category.TEXT, Category.HEADING, Category.TABLE)):
            uri = f"dpe://{app.host}/{ref}/elements/p{index}-{abbr}1"
            try:
                result = await app.read(uri)
            except Exception:
                continue
            took = time.perf_counter() - start
            await app.aclose()
            text = result.contents[0].text  # type: ignore[union-attr]
            return json.dumps({"element": uri.rsplit("/", 1)[1], "chars": len(text), "t": took})
        await app.aclose()
    raise SystemExit("no element found on that page")


MEASURES: dict[str, Callable[[Path, str], str]] = {
    "bare_xlsx": bare_xlsx,
    "bare_pdf": bare_pdf,
    "bare_pdf_page": bare_pdf_page,
    "bare_pdfium": bare_pdfium,
    "pdfium_calls": pdfium_calls,
    "bare_pptx": bare_pptx,
    "bare_docx": bare_docx,
    "bare_docx_paragraphs": bare_docx_paragraphs,
    "dpe_extract": dpe_extract,
    "dpe_element": dpe_element,
}


def _preimport(name: str, path: Path) -> None:
    """Import what NAME needs before the clock starts (both sides alike).

    `dpe_extract` imports what a worker process holds when it parses (the job runner, not the
    server's MCP and HTTP stack) and the extractor of PATH's format only, so its peak memory is
    a worker's, not the server's (issue 37: 80 MB before the first byte with the server and
    the four large formats imported, 28 MB so)."""
    if name == "dpe_element":
        import dpe_server.extractors
        import dpe_server.surface.app
    if name == "pdfium_calls":
        from dpe_server.extractors.pdf import glyphs, shapes  # noqa: F401
    if name == "dpe_extract":
        import dpe_server.isolation.jobs
        import dpe_server.isolation.workers  # noqa: F401
        from dpe_server.extractors import for_path

        for_path(path)
    modules = {
        "bare_xlsx": "python_calamine",
        "bare_pdf": "pypdf",
        "bare_pdf_page": "pypdf",
        "bare_pdfium": "pypdfium2",
        "bare_pptx": "pptx",
        "bare_docx": "docx",
        "bare_docx_paragraphs": "docx",
    }
    if name in modules:
        __import__(modules[name])


def _vm_hwm_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    name, path = sys.argv[1], Path(sys.argv[2])
    arg = sys.argv[3] if len(sys.argv) > 3 else ""
    _preimport(name, path)
    cpu0, start = time.process_time(), time.perf_counter()
    note = MEASURES[name](path, arg)
    seconds = time.perf_counter() - start
    cpu: float | None = time.process_time() - cpu0
    if note.startswith("{"):  # the measure timed itself (setup excluded; the parse ran in a worker)
        seconds, cpu = json.loads(note)["t"], None
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(
        json.dumps(
            {"seconds": seconds, "cpu": cpu, "peak_mb": _vm_hwm_mb() + children, "note": note}
        )
    )


if __name__ == "__main__":
    main()
