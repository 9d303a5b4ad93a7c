"""Hostile files, generated from code, each with the outcomes the server may give it.

An outcome is an error kind (`too_large`, `corrupt`, `encrypted`, `unsupported`, `timeout`),
`ok` (a tree), `truncated` (a tree marked truncated), `broken` (a tree with a page marked
broken: the pptx reader serves the other slides), or `absent` (never listed: symlinks, lock
files). Where more than one outcome is acceptable the set says so; what is never
acceptable is a crash, a hang, a leak of a file outside the folder, or a server that stops
answering.
"""

from __future__ import annotations

import os
import shutil
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from fixtures.builders.rawpdf import pdf_bytes
from tests.e2e.harness import write_deck, write_doc, write_encrypted
from tests.hostile.zipgen import (
    Member,
    members_of,
    plain,
    repeat_deflate,
    repeated_check,
    write_zip,
)

MIB = 1024 * 1024
SECRET = "TOP-SECRET-OUTSIDE-THE-ROOT"
"""Written in a file outside the served folder: it must never appear in any answer."""


@dataclass(frozen=True, slots=True)
class Case:
    rel: str
    outcomes: frozenset[str]
    make: Callable[[Path, Path], None]
    """Writes the file: (path inside the folder, a scratch folder outside it)."""


# ---- xlsx ------------------------------------------------------------------------------

_CT = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
    'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-'
    'officedocument.spreadsheetml.sheet.main+xml"/>'
    '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.'
    'openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
    "%s</Types>"
)
_SST_CT = (
    '<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-'
    'officedocument.spreadsheetml.sharedStrings+xml"/>'
)
_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
    'relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>'
)
_WB = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
    'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
    '<sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>'
)
_WB_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
    'relationships/worksheet" Target="worksheets/sheet1.xml"/>%s</Relationships>'
)
_SST_REL = (
    '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
    'relationships/sharedStrings" Target="sharedStrings.xml"/>'
)
SHEET_HEAD = (
    b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
    b'<dimension ref="A1"/><sheetData>'
)
SHEET_TAIL = b"</sheetData></worksheet>"


def xlsx(path: Path, sheet: Member, shared_strings: str | None = None) -> None:
    members = [
        plain("[Content_Types].xml", _CT % (_SST_CT if shared_strings else "")),
        plain("_rels/.rels", _RELS),
        plain("xl/workbook.xml", _WB),
        plain("xl/_rels/workbook.xml.rels", _WB_RELS % (_SST_REL if shared_strings else "")),
        sheet,
    ]
    if shared_strings is not None:
        members.append(plain("xl/sharedStrings.xml", shared_strings))
    write_zip(path, members)


def sheet_of(rows: str) -> Member:
    return plain("xl/worksheets/sheet1.xml", SHEET_HEAD + rows.encode() + SHEET_TAIL)


def whitespace_gigabyte(path: Path, _: Path) -> None:
    """987 KB on disk, 1 GiB of whitespace inflated, inside the sheet's XML."""
    sheet = repeat_deflate(
        "xl/worksheets/sheet1.xml",
        SHEET_HEAD + b'<row r="1"><c r="A1" t="inlineStr"><is><t>x</t></is></c></row>',
        b" " * MIB,
        1024,
        SHEET_TAIL,
    )
    xlsx(path, sheet)


def rows_11_5_million(path: Path, _: Path) -> None:
    """11.5 million rows of one number each (rows without `r`: numbered implicitly)."""
    row = b"<row><c><v>1</v></c></row>" * 1000
    xlsx(path, repeat_deflate("xl/worksheets/sheet1.xml", SHEET_HEAD, row, 11_500, SHEET_TAIL))


def far_corners(path: Path, _: Path) -> None:
    """Cells only in A1 and XFD1048576: a dense grid would be 17 billion cells."""
    xlsx(
        path,
        sheet_of(
            '<row r="1"><c r="A1"><v>1</v></c></row>'
            '<row r="1048576"><c r="XFD1048576"><v>2</v></c></row>'
        ),
    )


def lying_extent(path: Path, _: Path) -> None:
    """Row 1 holds A1 and XFD1048576: the cells' references, not the row's number, place them
    (calamine's grid would be 17 billion cells)."""
    xlsx(path, sheet_of('<row r="1"><c r="A1"><v>1</v></c><c r="XFD1048576"><v>2</v></c></row>'))


MAIN_NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"


def prefixed_cell(path: Path, _: Path) -> None:
    """A1, then XFD1048576 written with a prefix of the sheet's own namespace (`<x:c`):
    calamine reads it as a cell (it knows cells by their local name), so its grid would be
    17 billion cells, as `lying_extent`'s."""
    far = f'<x:c xmlns:x="{MAIN_NS}" r="XFD1048576"><x:v>2</x:v></x:c>'
    xlsx(path, sheet_of(f'<row r="1"><c r="A1"><v>1</v></c>{far}</row>'))


LAUGHS = (
    '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
    + "".join(
        f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">'
        for i in range(1, 10)
    )
    + "]>"
)


def billion_laughs_xlsx(path: Path, _: Path) -> None:
    sst = (
        LAUGHS + '<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
        'count="1" uniqueCount="1"><si><t>&lol9;</t></si></sst>'
    )
    xlsx(path, sheet_of('<row r="1"><c r="A1" t="s"><v>0</v></c></row>'), sst)


def xxe_xlsx(path: Path, outside: Path) -> None:
    secret = outside / "secret.txt"
    secret.write_text(SECRET)
    sst = (
        f'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY xxe SYSTEM "file://{secret}">]>'
        '<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
        'count="1" uniqueCount="1"><si><t>&xxe;</t></si></sst>'
    )
    xlsx(path, sheet_of('<row r="1"><c r="A1" t="s"><v>0</v></c></row>'), sst)


# ---- docx / pptx -------------------------------------------------------------------------


def _replace(path: Path, name: str, member: Member) -> None:
    members = [m if m.name != name else member for m in members_of(path)]
    write_zip(path, members)


def lying_docx(path: Path, _: Path) -> None:
    """document.xml inflates to 300 MiB while its headers say 2 KB."""
    write_doc(path, ["Lying"])
    body = repeat_deflate(
        "word/document.xml",
        b'<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/'
        b'wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>',
        b" " * MIB,
        300,
        b"</w:t></w:r></w:p></w:body></w:document>",
        declared=2048,
    )
    _replace(path, "word/document.xml", body)


def lying_pptx(path: Path, _: Path) -> None:
    """slide1.xml inflates to 300 MiB while its headers say 2 KB."""
    write_deck(path, ["Lying"])
    slide = repeat_deflate(
        "ppt/slides/slide1.xml",
        b'<?xml version="1.0"?><p:sld xmlns:p="http://schemas.openxmlformats.org/'
        b'presentationml/2006/main"><p:cSld><p:spTree>',
        b" " * MIB,
        300,
        b"</p:spTree></p:cSld></p:sld>",
        declared=2048,
    )
    _replace(path, "ppt/slides/slide1.xml", slide)


def billion_laughs_docx(path: Path, _: Path) -> None:
    write_doc(path, ["Laughs"])
    body = (
        LAUGHS + '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/'
        'main"><w:body><w:p><w:r><w:t>&lol9;</w:t></w:r></w:p></w:body></w:document>'
    )
    _replace(path, "word/document.xml", plain("word/document.xml", body))


def xxe_pptx(path: Path, outside: Path) -> None:
    secret = outside / "secret.txt"
    secret.write_text(SECRET)
    write_deck(path, ["Entity"])
    slide = (
        f'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY xxe SYSTEM "file://{secret}">]>'
        '<p:sld xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" '
        'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><p:cSld><p:spTree>'
        "<p:sp><p:txBody><a:p><a:r><a:t>&xxe;</a:t></a:r></a:p></p:txBody></p:sp>"
        "</p:spTree></p:cSld></p:sld>"
    )
    _replace(path, "ppt/slides/slide1.xml", plain("ppt/slides/slide1.xml", slide))


def many_members(path: Path, _: Path) -> None:
    """A package of 20,000 empty members (the cap is 10,000)."""
    write_zip(path, [plain(f"word/m{i}.xml", b"", deflate=False) for i in range(20_000)])


# ---- pdf -------------------------------------------------------------------------------


PAGE = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>"
CATALOG = b"<< /Type /Catalog /Pages 2 0 R >>"
PAGES = b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>"


def _stream(data: bytes, extra: bytes = b"", length: int | None = None) -> bytes:
    n = len(data) if length is None else length
    return b"<< /Length %d%s >>\nstream\n" % (n, extra) + data + b"\nendstream"


def circular_xref(path: Path, _: Path) -> None:
    text = _stream(b"BT /F1 12 Tf 72 720 Td (Circular) Tj ET")
    path.write_bytes(pdf_bytes([CATALOG, PAGES, PAGE, text], prev_self=True))


def cyclic_pages(path: Path, _: Path) -> None:
    pages = b"<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 2 >>"
    text = _stream(b"BT (Cycle) Tj ET")
    path.write_bytes(pdf_bytes([CATALOG, pages, PAGE, text]))


def huge_length(path: Path, _: Path) -> None:
    text = _stream(b"BT (Length) Tj ET", length=99_999_999_999)
    path.write_bytes(pdf_bytes([CATALOG, PAGES, PAGE, text]))


def flate_bomb(path: Path, _: Path) -> None:
    """A content stream inflating to 1 GiB of spaces (about 1 MB on disk)."""
    chunk = b" " * MIB
    member = repeat_deflate("c", b"BT (Bomb) Tj ET ", chunk, 1024, b"")
    adler = repeated_check(chunk, 1024, zlib.adler32(b"BT (Bomb) Tj ET "), "adler32")
    data = b"\x78\x9c" + member.data + adler.to_bytes(4, "big")
    path.write_bytes(pdf_bytes([CATALOG, PAGES, PAGE, _stream(data, b" /Filter /FlateDecode")]))


# ---- wrong types, truncation, links, lock files -------------------------------------------


def legacy_doc(path: Path, _: Path) -> None:
    path.write_bytes(
        b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 504 + "WordDocument".encode("utf-16-le")
    )


def pdf_named_docx(path: Path, _: Path) -> None:
    path.write_bytes(pdf_bytes([CATALOG, PAGES, PAGE, _stream(b"BT (P) Tj ET")]))


def docx_named_pdf(path: Path, scratch: Path) -> None:
    write_doc(scratch / "real.docx", ["Renamed"])
    path.write_bytes((scratch / "real.docx").read_bytes())


def xlsx_named_docx(path: Path, _: Path) -> None:
    far_corners(path, path)


def text_named_xlsx(path: Path, _: Path) -> None:
    path.write_text("just,some,text\n1,2,3\n")


def empty(path: Path, _: Path) -> None:
    path.write_bytes(b"")


def truncated_docx(path: Path, scratch: Path) -> None:
    write_doc(scratch / "whole.docx", ["Truncated"])
    data = (scratch / "whole.docx").read_bytes()
    path.write_bytes(data[: len(data) // 2])


def truncated_pptx(path: Path, scratch: Path) -> None:
    write_deck(scratch / "whole.pptx", ["Truncated"])
    data = (scratch / "whole.pptx").read_bytes()
    path.write_bytes(data[: len(data) * 2 // 3])


def truncated_pdf(path: Path, _: Path) -> None:
    data = pdf_bytes([CATALOG, PAGES, PAGE, _stream(b"BT (Cut) Tj ET")])
    path.write_bytes(data[: len(data) // 2])


def encrypted(path: Path, _: Path) -> None:
    write_encrypted(path)


def link_out(path: Path, outside: Path) -> None:
    secret = outside / "secret.docx"
    write_doc(secret, [SECRET])
    os.symlink(secret, path)


def link_loop(path: Path, _: Path) -> None:
    os.symlink(path.with_name("loop-b.docx"), path)
    os.symlink(path, path.with_name("loop-b.docx"))
    os.symlink(".", path.with_name("dirloop"))


def lock_file(path: Path, _: Path) -> None:
    write_doc(path, ["Lock"])


def healthy(path: Path, _: Path) -> None:
    write_doc(path, ["Healthy heading", "Second heading"])


# ---- web pages ---------------------------------------------------------------------------


def deep_html(path: Path, _: Path) -> None:
    path.write_bytes(b"<html><body>" + b"<div>" * 100_000 + b"deep" + b"</div>" * 100_000)


def billion_laughs_xhtml(path: Path, _: Path) -> None:
    path.write_text(
        LAUGHS + '<html xmlns="http://www.w3.org/1999/xhtml"><body><p>&lol9;</p></body></html>'
    )


def xxe_xhtml(path: Path, outside: Path) -> None:
    """An external entity, a remote picture and a frame naming the secret file outside."""
    (outside / "secret.txt").write_text(SECRET)
    secret = (outside / "secret.txt").as_uri()
    path.write_text(
        f'<?xml version="1.0"?><!DOCTYPE html [<!ENTITY xxe SYSTEM "{secret}">]>'
        f'<html xmlns="http://www.w3.org/1999/xhtml"><body><p>&xxe;</p>'
        f'<img src="{secret}" alt="x"/><iframe src="{secret}"></iframe></body></html>'
    )


def deep_markdown(path: Path, _: Path) -> None:
    path.write_text(">" * 100_000 + " deep\n" + "- " * 50_000 + "x\n")


def binary_text(path: Path, _: Path) -> None:
    path.write_bytes(bytes(range(256)) * 4096)


def epub_bomb(path: Path, _: Path) -> None:
    """An EPUB whose chapter inflates past the part cap (300 MiB of spaces)."""
    from fixtures.builders.epub import epub3_members, write_epub

    members = epub3_members()
    members["OEBPS/text/chapter1.xhtml"] = b"<p>" + b" " * (300 * MIB)
    write_epub(path, members)


def zip_named_html(path: Path, _: Path) -> None:
    write_zip(path, [plain("index.html", b"<p>zipped</p>")])


def _k(*kinds: str) -> frozenset[str]:
    return frozenset(kinds)


CASES = [
    Case("xlsx/whitespace-1gb.xlsx", _k("too_large"), whitespace_gigabyte),
    Case("xlsx/rows-11-5m.xlsx", _k("too_large", "truncated"), rows_11_5_million),
    Case("xlsx/far-corners.xlsx", _k("ok", "truncated"), far_corners),
    Case("xlsx/lying-extent.xlsx", _k("ok", "too_large"), lying_extent),
    Case("xlsx/prefixed-cell.xlsx", _k("ok", "too_large"), prefixed_cell),
    Case("xlsx/billion-laughs.xlsx", _k("corrupt", "unsupported"), billion_laughs_xlsx),
    Case("xlsx/xxe.xlsx", _k("corrupt", "unsupported"), xxe_xlsx),
    Case("docx/lying-sizes.docx", _k("too_large", "corrupt"), lying_docx),
    Case("pptx/lying-sizes.pptx", _k("too_large", "corrupt", "broken"), lying_pptx),
    Case("docx/billion-laughs.docx", _k("corrupt", "unsupported"), billion_laughs_docx),
    Case("pptx/xxe.pptx", _k("corrupt", "unsupported", "broken"), xxe_pptx),
    Case("docx/many-members.docx", _k("too_large"), many_members),
    Case("pdf/circular-xref.pdf", _k("ok", "corrupt"), circular_xref),
    Case("pdf/cyclic-pages.pdf", _k("ok", "corrupt"), cyclic_pages),
    Case("pdf/huge-length.pdf", _k("ok", "corrupt"), huge_length),
    Case("pdf/flate-bomb.pdf", _k("ok", "truncated", "too_large"), flate_bomb),
    # read as the .doc it is: LibreOffice fails on the damaged file, or its absence is said
    Case(
        "wrong/legacy.docx", _k("corrupt" if shutil.which("soffice") else "unsupported"), legacy_doc
    ),
    Case("wrong/pdf.docx", _k("unsupported"), pdf_named_docx),
    Case("wrong/docx.pdf", _k("unsupported"), docx_named_pdf),
    Case("wrong/xlsx.docx", _k("unsupported"), xlsx_named_docx),
    Case("wrong/text.xlsx", _k("corrupt"), text_named_xlsx),
    Case("wrong/empty.pptx", _k("corrupt"), empty),
    Case("cut/truncated.docx", _k("corrupt"), truncated_docx),
    Case("cut/truncated.pptx", _k("corrupt"), truncated_pptx),
    Case("cut/truncated.pdf", _k("corrupt"), truncated_pdf),
    Case("locked/protected.xlsx", _k("encrypted"), encrypted),
    Case("links/out.docx", _k("absent"), link_out),
    Case("links/loop-a.docx", _k("absent"), link_loop),
    Case("links/loop-b.docx", _k("absent"), lambda p, o: None),
    Case("lock/~$report.docx", _k("absent"), lock_file),
    Case("lock/.~lock.report.docx#", _k("absent"), lock_file),
    Case("lock/~WRL0001.tmp", _k("absent"), lock_file),
    Case("html/deep-100k.html", _k("too_large"), deep_html),
    Case("html/billion-laughs.xhtml", _k("ok"), billion_laughs_xhtml),
    Case("html/xxe.xhtml", _k("ok"), xxe_xhtml),
    Case("wrong/zip.html", _k("unsupported"), zip_named_html),
    Case("md/deep.md", _k("too_large"), deep_markdown),
    Case("text/binary.txt", _k("corrupt"), binary_text),
    Case("epub/bomb.epub", _k("too_large"), epub_bomb),
    Case("healthy.docx", _k("ok"), healthy),
]
"""Every hostile case; `healthy.docx` is what the second client keeps reading."""


def build(folder: Path, scratch: Path) -> dict[str, Case]:
    """Write every case below `folder` (scratch files go to `scratch`, outside it)."""
    for case in CASES:
        path = folder / case.rel
        path.parent.mkdir(parents=True, exist_ok=True)
        case.make(path, scratch)
    old = 1_600_000_000  # files look settled: the catalog's fresh-file retries stay out of it
    for case in CASES:
        path = folder / case.rel
        if path.exists() and not path.is_symlink():
            os.utime(path, (old, old))
    return {case.rel: case for case in CASES}
