"""The pdf extractor: every PDF page is a DPE page, its structure recovered from the layout.

Two libraries: pypdf opens the file (sniffing, passwords, errors) and reads its objects
(outline, annotations, forms, images, structure tree, properties); PDFium (pypdfium2) lays
each page out for its text, rules and image positions.

Modules: `pdf_open` (sniffing, empty password, error translation), `pdf_collect` (one PDFium
pass over a page: text runs from `pdf_glyphs` with `pdf_textnorm`, rules and image draws from
`pdf_shapes`; the types in `pdf_items`), `pdf_lines` (columns and
lines), `pdf_blocks` (headings, paragraphs, lists, code, aligned tables, in that module's
order of precedence), `pdf_headings` (which lines are headings, levels from the document's
heading styles), `pdf_markers` (list markers and their numbers), `pdf_aligned` (borderless
tables), `pdf_tables` (ruled tables), `pdf_furniture` (running headers and footers),
`pdf_annots` (links, annotations, forms, widgets, media), `pdf_images` (image XObjects and alt
text), `pdf_props` (document properties and the outline).

Extraction is per page: `extract_pages(f, [37], limits)` reads page 37 and, for header and
footer detection, at most four neighbours (see `pdf_furniture`), and, when page 37 has a line
styled as a heading, the first two pages, which give the document's heading styles (see
`pdf_headings`); the outline → page map and the heading styles are computed once per reader.
A page with no text layer gets `metadata.no_text_layer: true` and its images are described as
scanned pages; a page that is a picture is recognised (OCR, the `dpe-server[ocr]` extra: see
`pdf_scanned`), or, with `Limits.ocr_later`, says `ocr: "pending"` for a job of its own.

Page title: the page's first heading in reading order (a document's title before the first
section the outline names), else its first outline entry, else its first line with at least
two letters, else `Page {N+1}`.
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, BinaryIO

import pypdfium2
from pypdf import PdfReader, PdfWriter

from dpe_server.extractors.base import Extractor, Limits
from dpe_server.extractors.pdf.annots import TextAt, read_annots
from dpe_server.extractors.pdf.blocks import Block, lay_out
from dpe_server.extractors.pdf.collect import PDFIUM_LOCK, Draw, PageContent, Run, collect_page
from dpe_server.extractors.pdf.furniture import NEIGHBOURS, EdgeLine, edge_lines, repeated
from dpe_server.extractors.pdf.headings import (
    PROFILE_PAGES,
    Styles,
    document_styles,
    norm,
)
from dpe_server.extractors.pdf.images import alt_texts, page_images, read_image
from dpe_server.extractors.pdf.lines import make_lines
from dpe_server.extractors.pdf.open import PLAIN_ERRORS, open_pdf, translated
from dpe_server.extractors.pdf.props import outline_map, properties
from dpe_server.extractors.pdf.scanned import later, mark, recognise_page, to_recognise
from dpe_server.extractors.pdf.tables import ruled_tables
from dpe_server.model import summaries
from dpe_server.model.content import FormContent, HeaderFooterContent, ImageContent
from dpe_server.model.errors import CorruptError, TooLargeError
from dpe_server.model.tree import (
    JSON,
    Category,
    Document,
    Page,
    PageBuilder,
    Properties,
    one_line,
)

__all__ = [
    "EXTRACTOR",
    "SCANNED",
    "collect_page",
    "extract",
    "extract_pages",
    "image_bytes",
    "probe",
]

VERSION = "3"
TITLE_CHARS = 80
SCANNED = "Scanned page (no text layer)"
Box = tuple[float, float, float, float]


class _Doc:
    """One open reader and what its pages share (outline, alt texts, neighbours' edges).

    The text layer, rules and image positions come from PDFium (`collect_page`), opened on the
    same file beside pypdf, which reads everything else."""

    def __init__(self, reader: PdfReader, limits: Limits, f: BinaryIO) -> None:
        self.reader = reader
        self.f = f
        self._pdfium: Any = None
        self.limits = limits
        self.count = len(reader.pages)
        self._outline: dict[int, list[tuple[str, int]]] | None = None
        self._alt: dict[int, list[str]] | None = None
        self._styles: Styles | None = None
        self._contents: dict[int, PageContent] = {}
        self._edges: dict[int, list[EdgeLine]] = {}
        self._edges_current: set[int] = set()
        """Pages whose kept edge lines were built from the pass now kept in `_contents`."""

    @property
    def outline(self) -> dict[int, list[tuple[str, int]]]:
        if self._outline is None:
            self._outline = outline_map(self.reader)
        return self._outline

    @property
    def alt(self) -> dict[int, list[str]]:
        if self._alt is None:
            try:
                self._alt = alt_texts(self.reader)
            except PLAIN_ERRORS:
                self._alt = {}
        return self._alt

    def styles(self) -> Styles:
        """The document's heading styles, from its first pages (see `pdf_headings`)."""
        if self._styles is None:
            pages = []
            for i in range(min(PROFILE_PAGES, self.count, self.limits.max_pages)):
                try:
                    pages.append(make_lines(list(self.content(i).runs)))
                except PLAIN_ERRORS:
                    continue
            self._styles = document_styles(pages)
        return self._styles

    def box(self, index: int) -> Box:
        try:
            b = self.reader.pages[index].cropbox
            return float(b.left), float(b.bottom), float(b.right), float(b.top)
        except PLAIN_ERRORS:
            return 0.0, 0.0, 612.0, 792.0

    def content(self, index: int) -> PageContent:
        """The page's one pass (kept, since a neighbour's pass serves the page later)."""
        hit = self._contents.get(index)
        if hit is None:
            page = self.pdfium_page(index)
            try:
                hit = collect_page(page, self.limits.max_chars_per_page)
            finally:
                with PDFIUM_LOCK:
                    page.close()
            self._contents[index] = hit
            self._edges_current.discard(index)
        return hit

    def edges(self, index: int) -> list[EdgeLine]:
        hit = self._edges.get(index)
        if hit is None:
            try:
                hit = edge_lines(self.content(index).runs, self.box(index))
            except PLAIN_ERRORS:
                hit = []
            else:
                self._edges_current.add(index)
            self._edges[index] = hit
        return hit

    def own_edges(self, index: int, content: PageContent) -> list[EdgeLine]:
        """The page's edge lines built from `content` itself (so its runs can be removed):
        those kept from a neighbour's read when they were built from this same pass."""
        if index in self._edges_current and self._contents.get(index) is content:
            return self._edges[index]
        edges = edge_lines(content.runs, self.box(index))
        self._edges[index] = edges
        self._edges_current.add(index)
        return edges

    def forget(self, index: int) -> None:
        self._contents.pop(index, None)

    def pdfium_page(self, index: int) -> Any:
        with PDFIUM_LOCK:
            if self._pdfium is None:
                self._pdfium = self._open_pdfium()
            return self._pdfium[index]

    def _open_pdfium(self) -> Any:
        """PDFium on the same file; for a file pypdf decrypted that PDFium will not open with
        the empty password (an empty owner password: PDFium tries it as the user's only), on
        a decrypted copy written by pypdf."""
        try:
            return pypdfium2.PdfDocument(self.f, password="")
        except pypdfium2.PdfiumError as exc:
            if not self.reader.is_encrypted:
                raise CorruptError("This PDF's pages cannot be laid out.") from exc
        copy = io.BytesIO()
        PdfWriter(clone_from=self.reader).write(copy)
        return pypdfium2.PdfDocument(copy.getvalue())

    def close(self) -> None:
        with PDFIUM_LOCK:
            if self._pdfium is not None:
                self._pdfium.close()
                self._pdfium = None


@contextmanager
def _document(reader: PdfReader, limits: Limits, f: BinaryIO) -> Iterator[_Doc]:
    doc = _Doc(reader, limits, f)
    try:
        yield doc
    finally:
        doc.close()


def _text_at(runs: Sequence[Run]) -> TextAt:
    def text_at(rect: Box) -> str:
        x0, y0, x1, y1 = rect
        parts: list[Run] = []
        for run in runs:
            if y0 - 2 <= run.y + 0.3 * run.size <= y1 + 2 and run.x0 < x1 and run.x1 > x0:
                parts.append(_clip(run, x0, x1))
        return " ".join(ln.text for ln in make_lines(parts)).strip()

    return text_at


def _clip(run: Run, x0: float, x1: float) -> Run:
    """The part of `run` between x0 and x1: the characters whose middles are inside, placed
    from the measured extent of their word (spread evenly over it), else over the run."""
    if run.x1 - run.x0 <= 0 or (run.x0 >= x0 - 1 and run.x1 <= x1 + 1):
        return run
    spans = run.spans or ((0, run.x0, run.x1),)
    keep: list[int] = []
    for i, (offset, start, end) in enumerate(spans):
        stop = spans[i + 1][0] if i + 1 < len(spans) else len(run.text)
        n = len(run.text[offset:stop].rstrip()) or 1
        step = (end - start) / n
        keep.extend(k + offset for k in range(n) if x0 <= start + (k + 0.5) * step <= x1)
    text = run.text[keep[0] : keep[-1] + 1].strip() if keep else ""
    return Run(
        text, max(x0, run.x0), min(x1, run.x1), run.y, run.size, run.font, run.bold, run.mono
    )


def _insert_by_position(blocks: list[Block], extra: Sequence[Block]) -> list[Block]:
    """Put tables and images before the first block below them in the same column."""
    out = list(blocks)
    for item in sorted(extra, key=lambda b: -b.top):
        at = next(
            (
                k
                for k, b in enumerate(out)
                if b.top < item.top - 1 and b.x0 < item.x1 and b.x1 > item.x0 and b.kind != "image"
            ),
            len(out),
        )
        out.insert(at, item)
    return out


def _image_blocks(doc: _Doc, index: int, content: PageContent, scanned: bool) -> list[Block]:
    images, _ = page_images(doc.reader.pages[index])
    alts = list(doc.alt.get(index, []))
    blocks: list[Block] = []
    draws = list(content.draws)
    for image in images:
        description = alts.pop(0) if alts else (SCANNED if scanned else "")
        block = Block(
            "image",
            ImageContent(
                description=description,
                mime_type=image.mime_type,
                width=image.width,
                height=image.height,
            ),
            -1.0,
            0.0,
            0.0,
            {"xobject": image.name, "ref": image.ref},
        )
        draw = _take_draw(draws, image.width, image.height)
        if draw is not None:
            x0, y0, x1, y1 = draw.box
            block.top, block.x0, block.x1 = y1, x0, x1
            block.meta["bbox"] = [round(x0, 1), round(y0, 1), round(x1, 1), round(y1, 1)]
        blocks.append(block)
    return blocks


def _take_draw(draws: list[Draw], width: int, height: int) -> Draw | None:
    """The first drawing of an image of that pixel size (removed from `draws`)."""
    for i, draw in enumerate(draws):
        if draw.width == width and draw.height == height:
            return draws.pop(i)
    return None


def _add_block(b: PageBuilder, block: Block) -> None:
    c = block.content
    kind = block.kind
    if kind == "text":
        b.add(Category.TEXT, summaries.text(str(c["text"])), c, block.meta)
    elif kind == "heading":
        b.add(
            Category.HEADING, summaries.heading(str(c["text"]), int(str(c["level"]))), c, block.meta
        )
    elif kind == "list":
        items = c["items"]
        assert isinstance(items, list)
        b.add(Category.LIST, summaries.list_(items, bool(c["ordered"])), c, block.meta)
    elif kind == "code":
        b.add(Category.CODE, summaries.code(str(c["text"])), c, block.meta)
    elif kind == "table":
        headers = c["headers"]
        assert isinstance(headers, list)
        summary = summaries.table(headers, int(str(c["total_rows"])), int(str(c["total_columns"])))
        b.add(Category.TABLE, summary, c, block.meta)
    elif kind == "image":
        summary = summaries.image(
            str(c["description"]), str(c["mime_type"]), _int(c.get("width")), _int(c.get("height"))
        )
        b.add(Category.IMAGE, summary, c, block.meta)


def _furniture(text: str) -> HeaderFooterContent:
    return {"text": text}


def _int(value: JSON) -> int | None:
    return value if isinstance(value, int) else None


def _page(doc: _Doc, index: int) -> Page:
    limits = doc.limits
    content = doc.content(index)
    box = doc.box(index)
    meta: dict[str, JSON] = {
        "width": round(box[2] - box[0], 1),
        "height": round(box[3] - box[1], 1),
    }
    neighbours = [index + d for d in NEIGHBOURS if 0 <= index + d < doc.count]
    mine = doc.own_edges(index, content)
    furniture = repeated(mine, [doc.edges(j) for j in neighbours])
    furniture_runs = {id(r) for e in furniture for r in e.line.runs}
    if len(furniture_runs) >= len(content.runs):
        furniture, furniture_runs = [], set()
    body_runs = [r for r in content.runs if id(r) not in furniture_runs]
    scanned = not content.runs
    images = _image_blocks(doc, index, content, scanned)
    recognised = None
    if to_recognise(content, box, images, limits):
        recognised = later() if limits.ocr_later else recognise_page(doc.f, index, box)
        meta.update(recognised.meta)
    if recognised is not None and recognised.replaces_text_layer:
        body_runs, furniture = recognised.runs, []

    tables, flow_runs = ruled_tables(body_runs, content.segments)
    outline = doc.outline.get(index, [])
    blocks = lay_out(flow_runs, {norm(title): level for title, level in outline}, doc.styles)
    if recognised is not None and recognised.replaces_text_layer:
        mark([*blocks, *tables], recognised)
    placed = [im for im in images if im.top >= 0]
    blocks = _insert_by_position(blocks, [*tables, *placed])
    blocks += [im for im in images if im.top < 0]

    b = PageBuilder(index, limits.max_elements_per_page)
    for edge in furniture:
        if edge.top:
            b.add(Category.HEADER, summaries.header(edge.line.text), _furniture(edge.line.text))
    for block in blocks:
        _add_block(b, block)
    _add_annotations(doc, index, body_runs, b, meta)
    for edge in furniture:
        if not edge.top:
            b.add(Category.FOOTER, summaries.footer(edge.line.text), _furniture(edge.line.text))
    if scanned:
        meta["no_text_layer"] = True
    if content.truncated:
        meta["truncated"] = True
    title = _title(outline, blocks, index)
    return b.build(title, meta)


def _add_annotations(
    doc: _Doc, index: int, runs: Sequence[Run], b: PageBuilder, meta: dict[str, JSON]
) -> None:
    annots = read_annots(doc.reader.pages[index], doc.reader, _text_at(runs))
    if annots.truncated:
        meta["truncated"] = True
    for item in annots.items:
        c = item.content
        if item.kind == "link":
            b.add(Category.LINK, summaries.link(str(c["text"]), str(c["url"])), c, item.meta)
        elif item.kind == "annotation":
            author = c.get("author")
            summary = summaries.annotation(
                str(c["text"]), str(c["kind"]), str(author) if author else None
            )
            b.add(Category.ANNOTATION, summary, c, item.meta)
        elif item.kind in ("audio", "video"):
            category = Category.AUDIO if item.kind == "audio" else Category.VIDEO
            b.add(
                category,
                summaries.media(item.kind, str(c["name"]), str(c["mime_type"])),
                c,
                item.meta,
            )
        elif item.kind == "widget":
            text = c.get("text")
            summary = summaries.widget(str(c["kind"]), str(c["name"]), str(text) if text else None)
            b.add(Category.WIDGET, summary, c, item.meta)
    if annots.fields:
        b.add(Category.FORM, summaries.form(annots.fields), FormContent(fields=annots.fields))


def _title(outline: Sequence[tuple[str, int]], blocks: Sequence[Block], index: int) -> str:
    for block in blocks:
        if block.kind == "heading":
            return str(block.content["text"])
    if outline:
        return outline[0][0]
    for block in blocks:
        if sum(1 for ch in block.first_line if ch.isalpha()) >= 2:
            return one_line(block.first_line, TITLE_CHARS)
    return f"Page {index + 1}"


def _safe_page(doc: _Doc, index: int, f: BinaryIO) -> Page:
    """One page; a page that cannot be read becomes an empty page saying so."""
    try:
        with translated(f):
            return _page(doc, index)
    except (CorruptError, TooLargeError) as exc:
        return Page(index, f"Page {index + 1}", (), {"error": exc.to_json()})


def probe(f: BinaryIO, limits: Limits) -> Properties:
    reader = open_pdf(f)
    with translated(f):
        return properties(reader, limits)


def extract(f: BinaryIO, limits: Limits) -> Document:
    reader = open_pdf(f)
    with translated(f), _document(reader, limits, f) as doc:
        props = properties(reader, limits)
        count = min(doc.count, limits.max_pages)
        pages = []
        for index in range(count):
            pages.append(_safe_page(doc, index, f))
            doc.forget(index - 2)
    cut = doc.count > count or any(p.metadata.get("truncated") for p in pages)
    metadata: dict[str, JSON] = {"truncated": True} if cut else {}
    return Document(props, tuple(pages), metadata)


def extract_pages(f: BinaryIO, indices: Sequence[int], limits: Limits) -> list[Page]:
    reader = open_pdf(f)
    with translated(f), _document(reader, limits, f) as doc:
        wanted = [i for i in indices if 0 <= i < min(doc.count, limits.max_pages)]
        return [_safe_page(doc, index, f) for index in wanted]


def image_bytes(f: BinaryIO, ref: str, max_bytes: int) -> tuple[bytes, str] | None:
    """A Level 3 picture: the bytes and mime type (png or jpeg) of an image element, whose
    `metadata.ref` names its stream ("obj gen"); None when it cannot be shown or is larger
    than `max_bytes`. Read from the file when asked, never kept in the tree."""
    reader = open_pdf(f)
    with translated(f):
        return read_image(reader, ref, max_bytes)


EXTRACTOR = Extractor(
    name="pdf",
    suffixes=(".pdf",),
    version=VERSION,
    probe=probe,
    extract=extract,
    extract_pages=extract_pages,
)
