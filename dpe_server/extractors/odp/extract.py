"""OpenDocument presentation (.odp, .otp) → DPE tree: one page per slide (`draw:page`).

Pages (SPEC §5): title = the text of the slide's `presentation:class="title"` frame, else
`Slide {N+1}`; page metadata `master_page` (the slide's master) and `hidden: true` for a
slide whose drawing-page style hides it. Elements in the slide's order:

- the title frame → heading level 1, a subtitle frame → heading level 2
  (`metadata.placeholder`);
- a text frame or a shape with text → its paragraphs and lists (`odf.flow`: lists with
  `ordered` from their list style; links, notes, pictures inside follow);
- a shape's click action (`presentation:event-listener` with an `xlink:href`) → a link on
  the shape's text (`metadata.kind: click_action`); a link to a slide's `draw:name`
  (`#Name`) is `#slide=N` with `target_page`, as pptx internal links;
- the first connector linking two shapes → the slide's connector diagram (`connectors`);
- a frame with a table → table elements; with a picture, an object (chart, formula) or a
  plugin (audio, video) → that element (`odf.frames`); groups are read through;
- `office:annotation` (and `officeooo:annotation`, as LibreOffice writes a slide's comment)
  → annotation `comment` with its author and date;
- `office:forms` → one form element per form (`odf.forms`, as in odt), after the shapes;
- footer, date and slide number frames placed on the slide (`presentation:class` `footer`,
  `date-time`, `page-number`) → footer elements (`kind`: `footer`, `date`, `slide_number`)
  where they sit; then the footer and date declared for the slide
  (`presentation:use-footer-name`, `use-date-time-name`), the text written in its master
  page's footer and date frames (`metadata.master_page`) unless the slide's drawing-page
  style hides them (`presentation:display-footer`, `display-date-time`), and the slide's
  number when its style shows it (`presentation:display-page-number`) and the master has a
  number frame; a text already given is not repeated;
- the speaker notes (`presentation:notes`: its frames but the slide image and furniture, with
  or without `presentation:class="notes"`) last → annotation `speaker_notes`.
"""

from __future__ import annotations

from lxml import etree

from dpe_server.extractors.base import Limits
from dpe_server.extractors.kit.items import Item
from dpe_server.extractors.kit.package import Package
from dpe_server.extractors.kit.tables import emit_table
from dpe_server.extractors.odf.flow import FlowWriter
from dpe_server.extractors.odf.forms import form_items
from dpe_server.extractors.odf.inline import InlineReader, comment_item
from dpe_server.extractors.odf.package import (
    COMMENTS,
    DRAW,
    OFFICE,
    PRESENTATION,
    SHAPES,
    STYLE,
    TABLE,
    TEXT,
    XLINK,
    all_text,
    content_root,
    parts,
    plain_text,
)
from dpe_server.extractors.odf.reader import extractor
from dpe_server.extractors.odf.styles import Styles
from dpe_server.extractors.odf.tables import read_table
from dpe_server.extractors.odp import FORMAT
from dpe_server.extractors.odp.connectors import connector_diagram
from dpe_server.model import summaries
from dpe_server.model.direction import is_rtl
from dpe_server.model.tree import JSON, Category, Page, PageBuilder, one_line

_HEADINGS = {"title": 1, "subtitle": 2}
_DECLS = {
    "footer-decl": ("use-footer-name", "footer"),
    "date-time-decl": ("use-date-time-name", "date"),
}
_MASTER_FRAMES = {"footer": "footer", "date-time": "date"}
"""A master page's furniture frames read as footers (`kind`), and the drawing-page property
that hides each: `presentation:display-footer`, `presentation:display-date-time`."""
_FURNITURE = {"footer": "footer", "date-time": "date", "page-number": "slide_number"}
"""Footer, date and slide number frames (`presentation:class`) as footer kinds."""
_NOT_NOTES = frozenset(("page", "page-number", "header", "footer", "date-time"))
"""Frames of a notes page that are not the notes (the slide's image, furniture)."""


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
        for i, s in enumerate(slides):
            self.reader.slides.setdefault(s.get(DRAW + "name", ""), i)
        self.reader.slides.pop("", None)
        self.decls: dict[tuple[str, str], str] = {}
        for decl in body:
            local = etree.QName(decl).localname if isinstance(decl.tag, str) else ""
            if local in _DECLS:
                text = all_text(decl)
                self.decls[(local, decl.get(PRESENTATION + "name", ""))] = text
        self.master_footers = master_footers(styles_root)
        masters = styles_root.iter(STYLE + "master-page") if styles_root is not None else ()
        self.numbered = {
            master.get(STYLE + "name", "")
            for master in masters
            for frame in master.iter(DRAW + "frame")
            if frame.get(PRESENTATION + "class") == "page-number"
        }
        """Master pages with a slide number frame."""
        self.hidden_furniture: dict[str, set[str]] = {}
        """Drawing-page style -> the kinds of master furniture it hides."""
        self.shows_number: set[str] = set()
        """Drawing-page styles that show the master's slide number."""
        for st in content.iter(STYLE + "drawing-page-properties") if content is not None else ():
            style = st.getparent()
            name = style.get(STYLE + "name", "") if style is not None else ""
            for cls, kind in _MASTER_FRAMES.items():
                if st.get(PRESENTATION + f"display-{cls}") == "false":
                    self.hidden_furniture.setdefault(name, set()).add(kind)
            if st.get(PRESENTATION + "display-page-number") == "true":
                self.shows_number.add(name)
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
        self._shapes(slide, writer, notes, index + 1)
        forms = slide.find(OFFICE + "forms")  # first in the slide; its controls are shapes
        if forms is not None:
            writer.add_items(form_items(forms))
        self._footers(slide, b, index)
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

    def _shapes(
        self, holder: etree._Element, writer: FlowWriter, notes: list[str], number: int
    ) -> None:
        b = writer.b
        for shape in holder:
            tag = shape.tag
            if tag == PRESENTATION + "notes":
                notes.extend(
                    plain_text(f)
                    for f in shape.iter(DRAW + "frame")
                    if f.get(PRESENTATION + "class", "notes") not in _NOT_NOTES
                )
            elif tag in COMMENTS:
                writer.add_items([comment_item(shape, 0)])
            elif tag == DRAW + "g":
                self._shapes(shape, writer, notes, number)
            elif tag == DRAW + "frame" and shape.get(PRESENTATION + "class") in _FURNITURE:
                self._furniture(shape, writer.b, number)
            elif tag == DRAW + "frame":
                self._frame(shape, writer)
                self._click(shape, writer)
            elif tag in SHAPES:
                writer.blocks(shape)
                self._click(shape, writer)
                if tag == DRAW + "connector":
                    _connectors(shape, writer.b)
            elif tag == DRAW + "a":
                writer.add_items(self.reader.items_of(shape))
        if b.truncated:
            return

    def _click(self, shape: etree._Element, writer: FlowWriter) -> None:
        """A shape's click action that goes to a page or a slide → a link on its text."""
        for action in shape.iterfind(f"{OFFICE}event-listeners/{PRESENTATION}event-listener"):
            url = action.get(XLINK + "href", "")
            if url and action.get(PRESENTATION + "action") in ("show", None):
                text = one_line(plain_text(shape), 200)
                items: list[Item] = []
                self.reader.link(text, url, items, 0, "click_action")
                writer.add_items(items)

    def _furniture(self, frame: etree._Element, b: PageBuilder, number: int) -> None:
        """A footer, date or slide number frame placed on the slide itself (its slide number
        field shows the slide's number)."""
        kind = _FURNITURE[frame.get(PRESENTATION + "class", "")]
        if kind == "slide_number" and frame.find(f".//{TEXT}page-number") is not None:
            text = str(number)
        else:
            text = " ".join(plain_text(frame).split())
        if text:
            b.add(Category.FOOTER, summaries.footer(text), {"text": text, "kind": kind})

    def _frame(self, frame: etree._Element, writer: FlowWriter) -> None:
        cls = frame.get(PRESENTATION + "class", "")
        if cls in _HEADINGS:
            text = " ".join(plain_text(frame).split())
            if text:
                level = _HEADINGS[cls]
                content: dict[str, JSON] = {"level": level, "text": text}
                if is_rtl(text):
                    content["direction"] = "rtl"
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

    def _footers(self, slide: etree._Element, b: PageBuilder, index: int) -> None:
        shown = {  # what frames on the slide itself already said
            " ".join(plain_text(f).split())
            for f in slide.iter(DRAW + "frame")
            if f.get(PRESENTATION + "class") in _FURNITURE
            and f.getparent() is not None
            and f.getparent().tag != PRESENTATION + "notes"  # type: ignore[union-attr]
        }
        if any(
            f.get(PRESENTATION + "class") == "page-number" and f.getparent() is slide
            for f in slide.iter(DRAW + "frame")
        ):
            shown.add(str(index + 1))
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
        style = slide.get(DRAW + "style-name", "")
        number = str(index + 1)
        if style in self.shows_number and master in self.numbered and number not in shown:
            content = {"text": number, "kind": "slide_number"}
            b.add(Category.FOOTER, summaries.footer(number), content, {"master_page": master})


def _connectors(cxn: etree._Element, b: PageBuilder) -> None:
    """At the first connector of the slide, the slide's connector diagram."""
    slide = next(cxn.iterancestors(DRAW + "page"), None)
    if slide is None or next(slide.iter(DRAW + "connector")) is not cxn:
        return
    content = connector_diagram(slide)
    if content is not None:
        meta = {"name": cxn.get(DRAW + "name")} if cxn.get(DRAW + "name") else {}
        b.add(Category.DIAGRAM, summaries.diagram("connector", content["nodes"]), content, meta)


EXTRACTOR = extractor("odp", FORMAT.suffixes, "an OpenDocument presentation", _Opened)
