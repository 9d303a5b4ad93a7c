"""The parts around a docx body: main part lookup, notes, comments, headers and footers,
and altChunk content stored as HTML or plain text.
"""

from __future__ import annotations

from dataclasses import dataclass

from lxml import etree
from lxml import html as lxml_html

from dpe_server.extractors.docx.comments import load_comments
from dpe_server.extractors.docx.items import PartCtx
from dpe_server.extractors.docx.runs import InlineReader, Notes
from dpe_server.extractors.docx.styles import Styles
from dpe_server.extractors.docx.xml import CT, R, W, load, load_or_none, on
from dpe_server.extractors.kit.package import Package
from dpe_server.extractors.kit.xml import local
from dpe_server.model.errors import CorruptError, UnsupportedError

_MAIN_TYPES = (
    "wordprocessingml.document.main+xml",
    "ms-word.document.macroenabled.main+xml",
    "wordprocessingml.template.main+xml",
    "ms-word.template.macroenabledtemplate.main+xml",
)
_OTHER_ROOTS = {
    "workbook": "an Excel workbook",
    "presentation": "a PowerPoint presentation",
}


def main_part(pkg: Package) -> str:
    """The main document part, from the package relationships, else [Content_Types]."""
    for rel in pkg.rels("").values():
        if rel.type_name == "officeDocument" and not rel.external and pkg.has(rel.target):
            return rel.target
    types = pkg.xml_or_none("[Content_Types].xml")
    if types is not None:
        for override in types.iter(CT + "Override"):
            if override.get("ContentType", "").lower().endswith(_MAIN_TYPES):
                name = override.get("PartName", "").lstrip("/")
                if pkg.has(name):
                    return name
    if pkg.has("mimetype") and b"opendocument" in pkg.read("mimetype")[:200]:
        raise UnsupportedError(
            "This file is an OpenDocument file renamed to .docx; save it as .docx to read it."
        )
    raise CorruptError("The package has no main document part, so it is not a readable .docx.")


def check_root(root: etree._Element) -> etree._Element:
    """The `w:body` of a `w:document` root; a clear error for anything else."""
    if root.tag != W + "document":
        what = _OTHER_ROOTS.get(local(root))
        if what:
            raise UnsupportedError(f"This file is {what} renamed to .docx.")
        raise UnsupportedError(
            f"The main part is a {local(root) or 'non-element'} part, not a Word document body."
        )
    body = root.find(W + "body")
    if body is None:
        raise CorruptError("The Word document has no body element.")
    return body


@dataclass(frozen=True, slots=True)
class Related:
    """Part names related to the main part, by relationship type name."""

    styles: str | None = None
    numbering: str | None = None
    settings: str | None = None
    comments: str | None = None
    comments_extended: str | None = None
    footnotes: str | None = None
    endnotes: str | None = None


_REL_NAMES = {"commentsExtended": "comments_extended"}
"""Relationship type names that are not a field name of `Related` as they stand."""


def related(ctx: PartCtx) -> Related:
    found: dict[str, str] = {}
    for rel in ctx.rels.values():
        name = _REL_NAMES.get(rel.type_name, rel.type_name)
        if not rel.external and name in Related.__slots__:
            found.setdefault(name, rel.target)
    return Related(**{k: v for k, v in found.items() if ctx.pkg.has(v)})


def even_and_odd(pkg: Package, settings: str | None) -> bool:
    root = load_or_none(pkg, settings) if settings else None
    return root is not None and on(root.find(W + "evenAndOddHeaders"))


def _note_texts(pkg: Package, part: str | None, tag: str, styles: Styles) -> dict[str, str]:
    if part is None:
        return {}
    root = load(pkg, part)
    reader = InlineReader(PartCtx(pkg, part), styles, Notes())
    out: dict[str, str] = {}
    for note in root.iterfind(W + tag):
        if note.get(W + "type") in ("separator", "continuationSeparator", "continuationNotice"):
            continue
        text, _ = reader.text_box(note)
        out[note.get(W + "id", "")] = text.strip()
    return out


def load_notes(pkg: Package, rel: Related, styles: Styles) -> Notes:
    notes = Notes(
        footnotes=_note_texts(pkg, rel.footnotes, "footnote", styles),
        endnotes=_note_texts(pkg, rel.endnotes, "endnote", styles),
    )
    if rel.comments is not None:
        notes.comments, notes.replies = load_comments(
            pkg, rel.comments, rel.comments_extended, styles
        )
    return notes


@dataclass(frozen=True, slots=True)
class HeaderFooter:
    kind: str
    """header or footer"""
    variant: str
    """default, first or even"""
    part: str
    shown: bool


def section_header_footers(
    sect_prs: list[etree._Element | None], ctx: PartCtx, even_odd: bool
) -> list[list[HeaderFooter]]:
    """Per section, the headers and footers in force (inherited from earlier sections)."""
    current: dict[tuple[str, str], str] = {}
    out: list[list[HeaderFooter]] = []
    for sect in sect_prs:
        title_page = False
        if sect is not None:
            title_page = on(sect.find(W + "titlePg"))
            for ref in sect:
                kind = {W + "headerReference": "header", W + "footerReference": "footer"}.get(
                    str(ref.tag)
                )
                if kind is None:
                    continue
                rel = ctx.target(ref.get(R + "id"))
                if rel is not None and not rel.external and ctx.pkg.has(rel.target):
                    current[(kind, ref.get(W + "type", "default"))] = rel.target
        items = []
        for kind in ("header", "footer"):
            for variant in ("default", "first", "even"):
                part = current.get((kind, variant))
                if part is None:
                    continue
                shown = (
                    variant == "default"
                    or (variant == "first" and title_page)
                    or (variant == "even" and even_odd)
                )
                items.append(HeaderFooter(kind, variant, part, shown))
        out.append(items)
    return out


def header_text(pkg: Package, part: str, styles: Styles) -> str:
    root = load(pkg, part)
    text, _ = InlineReader(PartCtx(pkg, part), styles, Notes()).text_box(root)
    return "\n".join(line for line in text.splitlines() if line.strip())


# --- altChunk ------------------------------------------------------------------------------

_HTML_BLOCKS = {"p", "li", "pre", "blockquote", "dt", "dd", "caption", "address"}
_HTML_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_HTML_STRUCTURE = (
    *_HTML_BLOCKS,
    *_HTML_HEADINGS,
    *("table", "div", "ul", "ol", "dl", "section", "article", "main", "header", "footer"),
    *("nav", "aside", "figure", "form", "fieldset", "hr"),
)


def _squash(text: str) -> str:
    """HTML text as a browser lays it out: runs of white space (new lines too) are one space."""
    return " ".join(text.split())


def html_blocks(data: bytes) -> list[tuple[str, object]]:
    """An HTML chunk as ("heading", (level, text)), ("text", text), ("table", rows) blocks."""
    parser = lxml_html.HTMLParser(
        no_network=True, remove_comments=True, remove_pis=True, huge_tree=False
    )
    try:
        doc = lxml_html.document_fromstring(data, parser=parser)
    except (etree.ParserError, ValueError) as exc:
        raise CorruptError(f"An HTML chunk of the document cannot be read ({exc}).") from None
    for bad in list(doc.iter("script", "style", "head", "template")):
        if isinstance(bad, lxml_html.HtmlElement) and bad.getparent() is not None:
            bad.drop_tree()
    out: list[tuple[str, object]] = []

    def structural(el: lxml_html.HtmlElement) -> bool:
        tag = el.tag if isinstance(el.tag, str) else ""
        if tag in _HTML_STRUCTURE:
            return True
        return next(el.iterdescendants(*_HTML_STRUCTURE), None) is not None

    def block(el: lxml_html.HtmlElement) -> None:
        tag = el.tag if isinstance(el.tag, str) else ""
        if tag == "table":
            rows = [
                [_squash(cell.text_content()) for cell in tr if cell.tag in ("td", "th")]
                for tr in el.iter("tr")
            ]
            out.append(("table", rows))
        elif tag in _HTML_HEADINGS:
            out.append(("heading", (_HTML_HEADINGS[tag], _squash(el.text_content()))))
        elif tag in _HTML_BLOCKS and next(el.iterdescendants(*_HTML_STRUCTURE), None) is None:
            text = _squash(el.text_content())
            if text:
                out.append(("text", text))
        else:
            container(el)

    def container(el: lxml_html.HtmlElement) -> None:
        """Inline content between block children becomes one text block."""
        pending = [el.text or ""]

        def flush() -> None:
            text = _squash("".join(pending))
            pending.clear()
            if text:
                out.append(("text", text))

        for child in el:
            if structural(child):
                flush()
                block(child)
            else:
                pending.append(child.text_content())
            pending.append(child.tail or "")
        flush()

    body = doc.find("body")
    container(body if body is not None else doc)
    return out


def alt_chunk_blocks(ctx: PartCtx, chunk: etree._Element) -> tuple[str, list[tuple[str, object]]]:
    """(part name, blocks) of an altChunk; blocks are empty for formats not read (RTF, MHT)."""
    rel = ctx.target(chunk.get(R + "id"))
    if rel is None or rel.external or not ctx.pkg.has(rel.target):
        return "", []
    name = rel.target
    data = ctx.pkg.read(name)
    lower = name.lower()
    if lower.endswith((".html", ".htm", ".xhtml")) or data.lstrip()[:14].lower().startswith(
        (b"<!doctype html", b"<html")
    ):
        return name, html_blocks(data)
    if lower.endswith(".txt"):
        text = data.decode("utf-8", errors="replace").strip()
        return name, [("text", text)] if text else []
    return name, []
