"""The text of an office file as Word, PowerPoint, Excel or LibreOffice shows it, for the word
check (`L2.words`, `fidelity.compare`), read here from the file's XML with `zipfile` and lxml
(no DOCTYPE, no entities, no network) and nothing of the server's extractors:

- a Word document (.docx, .docm, .dotx, .dotm): the text runs (`w:t`) of its body (tables and
  text boxes, SmartArt data), headers, footers, footnotes, endnotes and comments; never
  deleted text (`w:delText`), field codes (`w:instrText`) or an equation's runs (`m:t`: the
  server serves a formula as LaTeX);
- a PowerPoint deck (.pptx, .pptm, .potx, .potm, .ppsx, .ppsm): the text runs (`a:t`) of every
  slide, its speaker notes, its comments and its SmartArt data; not the layouts' and masters'
  placeholder prompts, which a slide show never shows;
- an Excel workbook (.xlsx, .xlsm, .xltx, .xltm): each cell's text (a shared string, an inline
  string, a formula's text result, an error, TRUE or FALSE; a number carries no word), its
  comments and notes (not a note standing in for a threaded comment: Excel shows the
  thread), and the text of its drawings' shapes and SmartArt;
- OpenDocument (.odt, .ott, .odp, .otp, .ods, and the flat .fodt, .fodp, .fods): the
  paragraphs and headings of the body, a text's headers and footers; not alternative text
  (`svg:title`, `svg:desc`) or deleted tracked changes; of a spreadsheet, the text of its
  string cells (its comments are not served: docs/formats.md).

Of an `mc:AlternateContent`, the `mc:Choice` is read, as the application shows it, not the
`mc:Fallback`. Words are compared as a set with all the served pages (`fidelity.compare`), so
text read twice changes nothing.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

WORD = ("docx", "docm", "dotx", "dotm")
DECK = ("pptx", "pptm", "potx", "potm", "ppsx", "ppsm")
BOOK = ("xlsx", "xlsm", "xltx", "xltm")
OPEN = ("odt", "ott", "odp", "otp", "ods", "fodt", "fodp", "fods")
TYPES = (*WORD, *DECK, *BOOK, *OPEN)
"""The file types `document_text` reads."""

_DOCX_PARTS = re.compile(
    r"word/(document\d*|header\d*|footer\d*|footnotes|endnotes|comments|diagrams/data\d*)\.xml"
)
_PPTX_PARTS = re.compile(
    r"ppt/(slides/slide\d+|notesSlides/notesSlide\d+|diagrams/data\d*|comments/\w+)\.xml"
)
_XLSX_EXTRA = re.compile(
    r"xl/(comments\d*|threadedComments/\w+|drawings/drawing\d+|diagrams/data\d*)\.xml"
)
_THREADED = "[Threaded comment]"
"""How a legacy note that stands in for a threaded comment begins: its text tells an older
Excel that it cannot edit the thread; Excel shows the thread (`threadedComments`) instead."""
_SHEET = re.compile(r"xl/worksheets/sheet\d+\.xml")
_SKIPPED_ODF = frozenset(
    {"title", "desc", "tracked-changes", "forms", "creator", "creator-initials", "date"}
    | {"binary-data", "page-number"}
)
"""ODF elements whose text no reader shows in the body: alternative text, deleted tracked
changes, form definitions, a comment's author and date (fields the server serves apart), an
inline picture's base64 text, a page number field's placeholder (`<number>`: a number is
shown)."""
_STYLE = "{urn:oasis:names:tc:opendocument:xmlns:style:1.0}"
_HEADERS = frozenset(
    f"{_STYLE}{n}{v}" for n in ("header", "footer") for v in ("", "-left", "-first")
)
"""A text document's headers and footers of its master pages (a presentation's master
pages hold none; a spreadsheet's are printed, not shown)."""
_MATH = "/officeDocument/2006/math"
_OOXML_BLOCKS = frozenset(
    {"p", "txbxContent", "comment", "cm", "author", "si", "threadedComment", "tc", "sp"}
)
"""OOXML elements a reader shows apart from the text before and after them."""
_ODF_BLOCKS = frozenset(
    {"p", "h", "list-item", "table-cell", "note-citation", "note-body", "annotation"}
    | {"frame", "text-box", "custom-shape", "page", "g", "header", "footer"}
)
"""OpenDocument elements a reader shows apart from the text before and after them."""
_BREAKS = frozenset({"tab", "ptab", "br", "cr", "s", "line-break", "noBreakHyphen"})


def document_text(path: Path) -> str:
    """The whole text a reader shows of the office file at `path` (its type from its suffix).
    Raises `ValueError` for a file that is no package (a password-protected OOXML file is an
    encrypted compound file), `zipfile.BadZipFile` or lxml's errors for a damaged one."""
    kind = path.suffix.lower().lstrip(".")
    if kind in ("fodt", "fodp", "fods") and not zipfile.is_zipfile(path):
        return _open_text(_parsed(path.read_bytes()), spreadsheet=kind == "fods")
    if not zipfile.is_zipfile(path):
        raise ValueError("not a zip package (encrypted, or another format under its suffix)")
    with zipfile.ZipFile(path) as package:
        names = package.namelist()
        if kind in WORD:
            return "\n".join(_runs(package.read(n)) for n in names if _DOCX_PARTS.fullmatch(n))
        if kind in DECK:
            return "\n".join(_slide_text(package, n) for n in names if _PPTX_PARTS.fullmatch(n))
        if kind in BOOK:
            return _workbook(package, names)
        return "\n".join(_open_parts(package, names))


def _parsed(data: bytes) -> Any:
    from lxml import etree

    parser = etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, huge_tree=True, recover=True
    )
    return etree.fromstring(data, parser)


def _name(element: Any) -> str:
    tag = element.tag
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _runs(data: bytes) -> str:
    """The text of the runs (`w:t`, `a:t`, a spreadsheet's `t`, a comment's `text`) of an
    OOXML part, runs of one paragraph joined as they are shown, a line around paragraphs and
    comments, a space for a tab or break; not an equation's runs (`m:t`: the server serves a
    formula as LaTeX, whose words are not the runs'), nor an `mc:Fallback` (the Office
    application shows the `mc:Choice` beside it)."""
    out: list[str] = []
    skipped: Any = None
    for event, element in _walk(_parsed(data)):
        name = _name(element)
        if skipped is not None:
            skipped = None if event == "end" and element is skipped else skipped
            continue
        if event == "start" and (name in {"Fallback", "oMath"} or _threaded(element)):
            skipped = element
        elif event == "start" and name in ("t", "text") and _MATH not in element.tag:
            out.append(element.text or "")
        elif event == "start" and name in _BREAKS:
            out.append(" ")
        elif name in _OOXML_BLOCKS:
            out.append("\n")
    return "".join(out)


def _threaded(element: Any) -> bool:
    """Whether `element` is a legacy note standing in for a threaded comment."""
    if _name(element) != "comment":
        return False
    return "".join(t.text or "" for t in element.iter() if _name(t) == "t").startswith(_THREADED)


def _slide_text(package: zipfile.ZipFile, name: str) -> str:
    """A deck part's text; of a notes slide, its body placeholder's only: the notes pane
    shows that; the notes page's header, footer, date, number and other shapes are printed
    notes pages' furniture, not speaker notes (docs/formats.md)."""
    if not name.startswith("ppt/notesSlides/"):
        return _runs(package.read(name))
    from lxml import etree

    root = _parsed(package.read(name))
    bodies = [
        shape
        for shape in root.iter()
        if _name(shape) == "sp"
        and any(_name(p) == "ph" and p.get("type") == "body" for p in shape.iter())
    ]
    return "\n".join(_runs(etree.tostring(body)) for body in bodies)


def _walk(root: Any) -> Iterator[tuple[str, Any]]:
    """Every element of `root`'s tree: (`start`, e) before its children, (`end`, e) after."""
    stack = [(root, False)]
    while stack:
        element, done = stack.pop()
        if done:
            yield "end", element
            continue
        yield "start", element
        stack.append((element, True))
        stack.extend((child, False) for child in reversed(element))


def _workbook(package: zipfile.ZipFile, names: list[str]) -> str:
    shared: list[str] = []
    if "xl/sharedStrings.xml" in names:
        root = _parsed(package.read("xl/sharedStrings.xml"))
        for item in root:
            if _name(item) == "si":
                texts = (
                    t.text or ""
                    for t in item.iter()
                    if _name(t) == "t" and not any(_name(a) == "rPh" for a in t.iterancestors())
                )
                shared.append("".join(texts))
    out: list[str] = []
    for name in names:
        if _SHEET.fullmatch(name):
            out += dict.fromkeys(_cells(_parsed(package.read(name)), shared))
        elif _XLSX_EXTRA.fullmatch(name):
            out.append(_runs(package.read(name)))
    return "\n".join(out)


def _cells(sheet: Any, shared: list[str]) -> Iterator[str]:
    """The text each cell of a worksheet shows (numbers carry no word: left out), a shared
    string once however many cells show it."""
    seen: set[int] = set()
    for cell in sheet.iter():
        if _name(cell) != "c":
            continue
        kind = cell.get("t", "n")
        value = next((v.text or "" for v in cell if _name(v) == "v"), "")
        if kind == "s" and value.strip().isdigit() and int(value) < len(shared):
            if int(value) not in seen:
                seen.add(int(value))
                yield shared[int(value)]
        elif kind == "inlineStr":
            yield "".join(t.text or "" for t in cell.iter() if _name(t) == "t")
        elif kind in ("str", "e"):
            yield value
        elif kind == "b":
            yield "TRUE" if value.strip() == "1" else "FALSE"


def _open_parts(package: zipfile.ZipFile, names: list[str]) -> Iterator[str]:
    spreadsheet = "content.xml" in names and b"office:spreadsheet" in package.read("content.xml")
    for part in ("content.xml", "styles.xml"):
        if part in names:
            yield _open_text(_parsed(package.read(part)), spreadsheet)


def _open_text(root: Any, spreadsheet: bool) -> str:
    """What LibreOffice shows of an OpenDocument part (or flat file): the body's text, and a
    text document's headers and footers of its master pages."""
    out: list[str] = []
    for element in root.iter():
        name = _name(element)
        if name == "body":
            out.append(_body_text(element, spreadsheet))
        elif name == "master-styles" and not spreadsheet:
            out += [_body_text(p, False) for p in element.iter() if p.tag in _HEADERS]
    return "\n".join(out)


def _body_text(root: Any, spreadsheet: bool) -> str:
    out: list[str] = []
    skipped: list[Any] = []
    for event, element in _walk(root):
        name = _name(element)
        if skipped:
            if event == "end" and element is skipped[-1]:
                skipped.pop()
                if not skipped and element.tail:
                    out.append(element.tail)
            continue
        if event == "start" and (
            name in _SKIPPED_ODF
            or (spreadsheet and name == "annotation")
            or (spreadsheet and name == "table-cell" and _numeric(element))
        ):
            skipped.append(element)
            continue
        if name in _ODF_BLOCKS:
            out.append("\n")
        if event == "start":
            if name in _BREAKS:
                out.append(" ")
            if element.text and name not in _BREAKS:
                out.append(element.text)
        elif element is not root and element.tail:
            out.append(element.tail)
    return "".join(out)


def _numeric(cell: Any) -> bool:
    """Whether a spreadsheet cell holds a number, date, time, percentage, currency or truth
    value: its shown text is the value's format, not a word of the file."""
    kind = next((v for k, v in cell.attrib.items() if k.endswith("}value-type")), "string")
    return kind != "string"
