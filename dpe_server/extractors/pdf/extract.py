"""The pdf extractor: every PDF page is a DPE page, its structure recovered from the layout.

Two libraries: PDFium (pypdfium2) opens the file and lays each page out for its text, rules,
image positions and box, and reads the Info dictionary; pypdf reads the objects PDFium does not
(outline, annotations, forms, images, structure tree, XMP), and only when the document has
them: a page without annotations, in a file without images, outline or XMP, is read without
pypdf, which is then never imported. An encrypted, damaged or perhaps unfinished file is
opened with pypdf first (passwords, errors: see `open`).

Modules: `open` (sniffing, empty password, error translation), `collect` (one PDFium
pass over a page: text runs from `glyphs` with `textnorm`, rules and image draws from
`shapes`; the types in `items`), `lines` (columns and
lines), `sideheads` (headings in a narrow column left of the body), `blocks`
(headings, paragraphs, lists, code, aligned tables, in that module's
order of precedence), `headings` (which lines are headings, levels from the document's
heading styles), `markers` (list markers and their numbers), `aligned` (borderless
tables), `tables` (ruled tables), `furniture` (running headers and footers),
`annots` (links, annotations, forms, widgets, media), `images` (image XObjects and alt
text), `props` (document properties and the outline).

Extraction is per page: `extract_pages(f, [37], limits)` reads page 37 and, for header and
footer detection, at most four neighbours (see `furniture`), and, when page 37 has a line
styled as a heading, the first two pages, which give the document's heading styles (see
`headings`); the outline → page map and the heading styles are computed once per reader.
A page with no text layer gets `metadata.no_text_layer: true` and its images are described as
scanned pages; a page that is a picture is recognised (OCR, the `dpe-server[ocr]` extra: see
`scanned`), or, with `Limits.ocr_later`, says `ocr: "pending"` for a job of its own.

Page title: the page's first heading in reading order (a document's title before the first
section the outline names), else its first outline entry, else `Page {N+1}`; never a line of
body text (a continuation page's first line is no title).
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, BinaryIO

import pypdfium2

from dpe_server.extractors.base import Extractor, Limits
from dpe_server.extractors.pdf.blocks import Block, lay_out
from dpe_server.extractors.pdf.collect import PDFIUM_LOCK, Draw, PageContent, Run, collect_page
from dpe_server.extractors.pdf.furniture import NEIGHBOURS, EdgeLine, edge_lines, repeated
from dpe_server.extractors.pdf.headings import (
    PROFILE_PAGES,
    Styles,
    document_styles,
    norm,
)
from dpe_server.extractors.pdf.items import TextAt
from dpe_server.extractors.pdf.lines import make_lines
from dpe_server.extractors.pdf.open import (
    library_errors,
    open_document,
    open_pdf,
    translated,
)
from dpe_server.extractors.pdf.props import (
    has_outline,
    outline_map,
    pdfium_info,
    properties,
    reader_info,
    xmp_fields,
)
from dpe_server.extractors.pdf.scanned import later, mark, recognise_page, to_recognise
from dpe_server.extractors.pdf.tables import ruled_tables
from dpe_server.model import summaries
from dpe_server.model.content import FormContent, HeaderFooterContent, ImageContent
from dpe_server.model.errors import CorruptError, ExtractionError, TooLargeError
from dpe_server.model.tree import (
    JSON,
    Category,
    Document,
    Page,
    PageBuilder,
    Properties,
)

if TYPE_CHECKING:
    from pypdf import PdfReader

    from dpe_server.extractors.pdf.annots import PageAnnots
    from dpe_server.extractors.pdf.images import ImageInfo

__all__ = [
    "EXTRACTOR",
    "SCANNED",
    "collect_page",
    "extract",
    "extract_pages",
    "image_bytes",
    "probe",
]

SCANNED = "Scanned page (no text layer)"
Box = tuple[float, float, float, float]


def _name(name: str) -> bytes:
    """A pattern of the pdf name `/name` however it is written (any character may be a `#xx`
    escape) and not the start of a longer name."""
    chars = b"".join(b"(?:%s|#%x)" % (re.escape(c.encode()), ord(c)) for c in name)
    return b"/" + chars + rb"(?=[\s()<>\[\]{}/%]|$)"


_MAYBE_IMAGES = re.compile(_name("Image"), re.IGNORECASE)
"""An image XObject's `/Subtype /Image` (not the `/ImageB`... of a /ProcSet): where it is not
in the file's bytes, the file holds no image XObject (streams are never inside object
streams). (IGNORECASE: for the hex digits; a name in other case merely reads the file.)"""
_MAYBE_XMP = re.compile(_name("Metadata") + b"|" + _name("ObjStm"), re.IGNORECASE)
"""The catalog's `/Metadata` written out, or an object stream the catalog may hide in."""
_SCAN_CHUNK = 1 << 20
SCAN_MAX = 16 << 20
"""A larger file is not scanned: it may hold anything (pypdf is asked, as before PDFium
opened files alone), so no probe reads a large file whole."""


def _scan(f: BinaryIO, patterns: Sequence[re.Pattern[bytes]]) -> list[bool]:
    """Which of `patterns` occur in the file's bytes (read in chunks that overlap by 64
    bytes, longer than any match the patterns need to see); all of them for a file over
    `SCAN_MAX` bytes."""
    f.seek(0, 2)
    if f.tell() > SCAN_MAX:
        return [True] * len(patterns)
    found = [False] * len(patterns)
    f.seek(0)
    tail = b""
    while not all(found):
        chunk = f.read(_SCAN_CHUNK)
        if not chunk:
            break
        data = tail + chunk
        for i, pattern in enumerate(patterns):
            found[i] = found[i] or pattern.search(data) is not None
        tail = data[-64:]
    return found


class _Doc:
    """One open document and what its pages share (outline, alt texts, neighbours' edges).

    The text layer, rules, image positions and page boxes come from PDFium (`collect_page`);
    pypdf (`reader`) reads the rest, opened when first needed (see the module doc)."""

    def __init__(self, pdf: Any, reader: PdfReader | None, limits: Limits, f: BinaryIO) -> None:
        self.f = f
        self._pdfium: Any = pdf
        self._reader = reader
        self.plain = reader is None
        """PDFium opened the file alone: pypdf is asked only where PDFium sees it is needed."""
        self._reader_failed = False
        self.limits = limits
        with PDFIUM_LOCK:
            self.count = len(pdf) if reader is None else len(reader.pages)
        self._outline: dict[int, list[tuple[str, int]]] | None = None
        self._alt: dict[int, list[str]] | None = None
        self._info: Mapping[str, Any] | None = None
        self._xmp: dict[str, Any] | None = None
        self._maybe: list[bool] | None = None
        self._styles: Styles | None = None
        self._contents: dict[int, PageContent] = {}
        self._edges: dict[int, list[EdgeLine]] = {}
        self._edges_current: set[int] = set()
        """Pages whose kept edge lines were built from the pass now kept in `_contents`."""

    @property
    def reader(self) -> PdfReader | None:
        """pypdf's reader, opened when first asked for; None when pypdf cannot open a file
        PDFium read (what only pypdf reads is then left out)."""
        if self._reader is None and not self._reader_failed:
            try:
                self._reader = open_pdf(self.f)
            except ExtractionError:
                self._reader_failed = True
        return self._reader

    def _maybe_has(self) -> list[bool]:
        """[image XObjects, XMP] the file may hold (`_MAYBE_IMAGES`, `_MAYBE_XMP`)."""
        if self._maybe is None:
            self._maybe = _scan(self.f, (_MAYBE_IMAGES, _MAYBE_XMP))
        return self._maybe

    @property
    def encrypted(self) -> bool:
        return self._reader is not None and self._reader.is_encrypted

    def info(self) -> Mapping[str, Any]:
        if self._info is None:
            reader = self._reader
            if reader is not None:
                self._info = reader_info(reader)
            else:
                with PDFIUM_LOCK:
                    self._info = pdfium_info(self._pdfium)
        return self._info

    def xmp(self) -> dict[str, Any]:
        if self._xmp is None:
            self._xmp = {}
            if not self.plain or self._maybe_has()[1]:
                reader = self.reader
                self._xmp = xmp_fields(reader) if reader is not None else {}
        return self._xmp

    @property
    def outline(self) -> dict[int, list[tuple[str, int]]]:
        if self._outline is None:
            self._outline = {}
            with PDFIUM_LOCK:
                maybe = not self.plain or has_outline(self._pdfium)
            if maybe:
                reader = self.reader
                self._outline = outline_map(reader) if reader is not None else {}
        return self._outline

    @property
    def alt(self) -> dict[int, list[str]]:
        if self._alt is None:
            from dpe_server.extractors.pdf.images import alt_texts

            self._alt = {}
            reader = self.reader
            try:
                self._alt = alt_texts(reader) if reader is not None else {}
            except library_errors():
                pass
        return self._alt

    def images(self, index: int) -> list[ImageInfo]:
        """The page's image XObjects (pypdf), when the file may hold any."""
        if self.plain and not self._maybe_has()[0]:
            return []
        from dpe_server.extractors.pdf.images import page_images

        reader = self.reader
        return page_images(reader.pages[index])[0] if reader is not None else []

    def annots(self, index: int, content: PageContent, text_at: TextAt) -> PageAnnots | None:
        """The page's annotations (pypdf), when PDFium counted any; else None."""
        if self.plain and not content.annots:
            return None
        from dpe_server.extractors.pdf.annots import read_annots

        reader = self.reader
        return read_annots(reader.pages[index], reader, text_at) if reader is not None else None

    def styles(self) -> Styles:
        """The document's heading styles, from its first pages (see `headings`)."""
        if self._styles is None:
            pages = []
            for i in range(min(PROFILE_PAGES, self.count, self.limits.max_pages)):
                try:
                    pages.append(make_lines(list(self.content(i).runs)))
                except library_errors():
                    continue
            self._styles = document_styles(pages)
        return self._styles

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
                content = self.content(index)
                hit = edge_lines(content.runs, content.box)
            except library_errors():
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
        edges = edge_lines(content.runs, content.box)
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
        reader = self._reader
        if reader is None or not reader.is_encrypted:
            raise CorruptError("This PDF's pages cannot be laid out.")
        from pypdf import PdfWriter

        copy = io.BytesIO()
        PdfWriter(clone_from=reader).write(copy)
        return pypdfium2.PdfDocument(copy.getvalue())

    def close(self) -> None:
        with PDFIUM_LOCK:
            if self._pdfium is not None:
                self._pdfium.close()
                self._pdfium = None


@contextmanager
def _document(f: BinaryIO, limits: Limits) -> Iterator[_Doc]:
    pdf, reader = open_document(f)
    doc = _Doc(pdf, reader, limits, f)
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
    images = doc.images(index)
    if not images:
        return []
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


def add_block(b: PageBuilder, block: Block) -> None:
    """Add the element `block` makes to `b`."""
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
    box = content.box
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
        recognised = (
            later(limits) if limits.ocr_later else recognise_page(doc.f, index, box, limits)
        )
        meta.update(recognised.meta)
    if recognised is not None and recognised.replaces_text_layer:
        body_runs, furniture = recognised.runs, []

    tables, flow_runs = ruled_tables(body_runs, content.segments)
    outline = doc.outline.get(index, [])
    titles = {norm(title): level for title, level in outline}
    blocks = lay_out(flow_runs, titles, doc.styles, [(t.x0, t.x1, t.top) for t in tables])
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
        add_block(b, block)
    _add_annotations(doc.annots(index, content, _text_at(body_runs)), b, meta)
    for edge in furniture:
        if not edge.top:
            b.add(Category.FOOTER, summaries.footer(edge.line.text), _furniture(edge.line.text))
    if scanned:
        meta["no_text_layer"] = True
    if content.unmapped:
        meta["glyphs_without_text"] = content.unmapped
    if content.truncated:
        meta["truncated"] = True
    title = _title(outline, blocks, index)
    return b.build(title, meta)


def _add_annotations(annots: PageAnnots | None, b: PageBuilder, meta: dict[str, JSON]) -> None:
    if annots is None:
        return
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
                summaries.media(str(c["name"]), str(c["mime_type"])),
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
    return f"Page {index + 1}"


def _safe_page(doc: _Doc, index: int, f: BinaryIO) -> Page:
    """One page; a page that cannot be read becomes an empty page saying so."""
    try:
        with translated(f):
            return _page(doc, index)
    except (CorruptError, TooLargeError) as exc:
        return Page(index, f"Page {index + 1}", (), {"error": exc.to_json()})


def probe(f: BinaryIO, limits: Limits) -> Properties:
    with translated(f), _document(f, limits) as doc:
        return properties(doc, limits)


def extract(f: BinaryIO, limits: Limits) -> Document:
    with translated(f), _document(f, limits) as doc:
        props = properties(doc, limits)
        count = min(doc.count, limits.max_pages)
        pages = []
        for index in range(count):
            pages.append(_safe_page(doc, index, f))
            doc.forget(index - 2)
    cut = doc.count > count or any(p.metadata.get("truncated") for p in pages)
    metadata: dict[str, JSON] = {"truncated": True} if cut else {}
    return Document(props, tuple(pages), metadata)


def extract_pages(f: BinaryIO, indices: Sequence[int], limits: Limits) -> list[Page]:
    with translated(f), _document(f, limits) as doc:
        wanted = [i for i in indices if 0 <= i < min(doc.count, limits.max_pages)]
        return [_safe_page(doc, index, f) for index in wanted]


def image_bytes(f: BinaryIO, ref: str, max_bytes: int) -> tuple[bytes, str] | None:
    """A Level 3 picture: the bytes and mime type (png or jpeg) of an image element, whose
    `metadata.ref` names its stream ("obj gen"); None when it cannot be shown or is larger
    than `max_bytes`. Read from the file when asked, never kept in the tree."""
    from dpe_server.extractors.pdf.images import read_image

    reader = open_pdf(f)
    with translated(f):
        return read_image(reader, ref, max_bytes)


EXTRACTOR = Extractor(
    probe=probe,
    extract=extract,
    extract_pages=extract_pages,
)
