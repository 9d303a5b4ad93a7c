"""OpenDocument presentation (.odp, .otp) → DPE tree: one page per slide (`draw:page`).

Pages (SPEC §5): title = the text of the slide's `presentation:class="title"` frame, else
`Slide {N+1}`; page metadata `master_page` (the slide's master) and `hidden: true` for a
slide whose drawing-page style hides it. Elements in the slide's order:

- the title frame → heading level 1, a subtitle frame → heading level 2
  (`metadata.placeholder`);
- a text frame or a shape with text → its paragraphs and lists (`odf.flow`: lists with
  `ordered` from their list style; links, notes, pictures inside follow);
- a frame with a table → table elements; with a picture, an object (chart, formula) or a
  plugin (audio, video) → that element (`odf.frames`); groups are read through;
- `office:annotation` → annotation `comment` with its author and date;
- `office:forms` → one form element per form (`odf.forms`, as in odt), after the shapes;
- the footer and date declared for the slide (`presentation:use-footer-name`,
  `use-date-time-name`) → footer elements (`kind`: `footer`, `date`); then the text written
  in its master page's footer and date frames (`metadata.master_page`), unless the slide's
  drawing-page style hides them (`presentation:display-footer`, `display-date-time`);
- the speaker notes (`presentation:notes`) last → annotation `speaker_notes`.
"""

from __future__ import annotations

from lxml import etree

from dpe_server.extractors.base import Limits
from dpe_server.extractors.docx.tables import emit_table
from dpe_server.extractors.odf.flow import FlowWriter
from dpe_server.extractors.odf.forms import form_items
from dpe_server.extractors.odf.inline import InlineReader, comment_item
from dpe_server.extractors.odf.package import (
    DRAW,
    OFFICE,
    PRESENTATION,
    STYLE,
    TABLE,
    all_text,
    content_root,
    parts,
    plain_text,
)
from dpe_server.extractors.odf.reader import extractor
from dpe_server.extractors.odf.styles import Styles
from dpe_server.extractors.odf.tables import read_table
from dpe_server.extractors.odp import FORMAT
from dpe_server.extractors.ooxml.package import Package
from dpe_server.model import summaries
from dpe_server.model.tree import JSON, Category, Page, PageBuilder, one_line

_HEADINGS = {"title": 1, "subtitle": 2}
_SHAPES = frozenset(
    DRAW + t
    for t in (
        "custom-shape",
        "rect",
        "ellipse",
        "circle",
        "polygon",
        "polyline",
        "path",
        "line",
        "connector",
        "caption",
        "regular-polygon",
    )
)
_DECLS = {
    "footer-decl": ("use-footer-name", "footer"),
    "date-time-decl": ("use-date-time-name", "date"),
}
_MASTER_FRAMES = {"footer": "footer", "date-time": "date"}
"""A master page's furniture frames read as footers (`kind`), and the drawing-page property
that hides each: `presentation:display-footer`, `presentation:display-date-time`."""


def master_footers(styles_root: etree._Element | None) -> dict[str, list[tuple[str, str]]]:
    """Per master page name, (kind, text) of its footer and date frames that hold their own
    text; a frame holding only a field shows what each slide declares (`_DECLS`)."""
    out: dict[str, list[tuple[str, str]]] = {}
    if styles_root is None:
        return out
    for master in styles_root.iter(STYLE + "master-page"):
        for frame in master.iter(DRAW + "frame"):
            kind = _MASTER_FRAMES.get(frame.get(PRESENTATION + "class", ""))
            text = " ".join(plain_text(frame).split()) if kind else ""
            if kind and text:
                out.setdefault(master.get(STYLE + "name", ""), []).append((kind, text))
    return out


def _title(slide: etree._Element) -> str | None:
    for frame in slide.iter(DRAW + "frame"):
        if frame.get(PRESENTATION + "class") == "title" and frame.getparent() is slide:
            text = one_line(plain_text(frame), 120)
            if text:
                return text
    return None


class _Opened:
    def __init__(self, pkg: Package, limits: Limits) -> None:
        self.pkg = pkg
        self.limits = limits
        body = content_root(pkg, "presentation")
        content, styles_root = parts(pkg)
        self.styles = Styles(styles_root, content)
        self.reader = InlineReader(pkg)
        slides = body.findall(DRAW + "page")
        self.truncated = len(slides) > limits.max_pages
        self.slides = slides[: limits.max_pages]
        self.titles = [_title(s) or f"Slide {i + 1}" for i, s in enumerate(self.slides)]
        self.decls: dict[tuple[str, str], str] = {}
        for decl in body:
            local = etree.QName(decl).localname if isinstance(decl.tag, str) else ""
            if local in _DECLS:
                text = all_text(decl)
                self.decls[(local, decl.get(PRESENTATION + "name", ""))] = text
        self.master_footers = master_footers(styles_root)
        self.hidden_furniture: dict[str, set[str]] = {}
        """Drawing-page style -> the kinds of master furniture it hides."""
        for st in content.iter(STYLE + "drawing-page-properties") if content is not None else ():
            style = st.getparent()
            name = style.get(STYLE + "name", "") if style is not None else ""
            for cls, kind in _MASTER_FRAMES.items():
                if st.get(PRESENTATION + f"display-{cls}") == "false":
                    self.hidden_furniture.setdefault(name, set()).add(kind)
        self.hidden_styles = {
            st.get(STYLE + "name", "")
            for st in (content.iter(STYLE + "style") if content is not None else ())
            if st.get(STYLE + "family") == "drawing-page"
            and any(
                p.get(PRESENTATION + "visibility") == "hidden"
                for p in st.iter(STYLE + "drawing-page-properties")
            )
        }

    def page(self, index: int) -> Page:
        slide = self.slides[index]
        b = PageBuilder(index, self.limits.max_elements_per_page)
        writer = FlowWriter(b, self.reader, self.styles, self.limits.max_chars_per_page)
        notes: list[str] = []
        self._shapes(slide, writer, notes)
        forms = slide.find(OFFICE + "forms")  # first in the slide; its controls are shapes
        if forms is not None:
            writer.add_items(form_items(forms))
        self._footers(slide, b)
        text = "\n".join(n for n in notes if n)
        if text:
            kind = "speaker_notes"
            b.add(
                Category.ANNOTATION, summaries.annotation(text, kind), {"text": text, "kind": kind}
            )
        meta: dict[str, JSON] = {}
        if slide.get(DRAW + "master-page-name"):
            meta["master_page"] = slide.get(DRAW + "master-page-name")
        if slide.get(DRAW + "style-name") in self.hidden_styles:
            meta["hidden"] = True
        if writer.truncated:
            meta["truncated"] = True
        return b.build(self.titles[index], meta)

    def _shapes(self, holder: etree._Element, writer: FlowWriter, notes: list[str]) -> None:
        b = writer.b
        for shape in holder:
            tag = shape.tag
            if tag == PRESENTATION + "notes":
                notes.extend(
                    plain_text(f)
                    for f in shape.iter(DRAW + "frame")
                    if f.get(PRESENTATION + "class") == "notes"
                )
            elif tag == OFFICE + "annotation":
                writer.add_items([comment_item(shape, 0)])
            elif tag == DRAW + "g":
                self._shapes(shape, writer, notes)
            elif tag == DRAW + "frame":
                self._frame(shape, writer)
            elif tag in _SHAPES:
                writer.blocks(shape)
            elif tag == DRAW + "a":
                writer.add_items(self.reader.items_of(shape))
        if b.truncated:
            return

    def _frame(self, frame: etree._Element, writer: FlowWriter) -> None:
        cls = frame.get(PRESENTATION + "class", "")
        if cls in _HEADINGS:
            text = " ".join(plain_text(frame).split())
            if text:
                level = _HEADINGS[cls]
                content: dict[str, JSON] = {"level": level, "text": text}
                meta: dict[str, JSON] = {"placeholder": cls}
                writer.b.add(Category.HEADING, summaries.heading(text, level), content, meta)
            return
        table = frame.find(TABLE + "table")
        box = frame.find(DRAW + "text-box")
        if table is not None:
            meta = {"name": frame.get(DRAW + "name")} if frame.get(DRAW + "name") else {}
            writer.add_items(emit_table(writer.b, read_table(table, self.reader), meta))
        elif box is not None:
            writer.blocks(box)
        else:
            writer.add_items(self.reader.items_of(frame))

    def _footers(self, slide: etree._Element, b: PageBuilder) -> None:
        shown: set[str] = set()
        for (local, name), text in self.decls.items():
            attr, kind = _DECLS[local]
            if text and slide.get(PRESENTATION + attr) == name:
                content: dict[str, JSON] = {"text": text, "kind": kind}
                b.add(Category.FOOTER, summaries.footer(text), content)
                shown.add(text)
        master = slide.get(DRAW + "master-page-name", "")
        hidden = self.hidden_furniture.get(slide.get(DRAW + "style-name", ""), set())
        for kind, text in self.master_footers.get(master, []):
            if kind not in hidden and text not in shown:
                content = {"text": text, "kind": kind}
                b.add(Category.FOOTER, summaries.footer(text), content, {"master_page": master})
                shown.add(text)


EXTRACTOR = extractor("odp", FORMAT.suffixes, "an OpenDocument presentation", _Opened)
