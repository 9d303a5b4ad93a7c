"""Benchmark inputs, generated deterministically from code (seeded, fixed dates and zip times).

- `large(kind, out, quick)`: the large file of each format (issue 9 and issues 3-6):
  xlsx 50,000 rows x 10 columns; pdf 200 pages (heading, 3 paragraphs, an 8x5 table per page);
  pptx 100 slides (title, 5 bullets on 2 levels, a table, a picture, notes); docx ~200
  paragraphs with headings, bulleted and numbered lists and a 20x5 table.
- `folder(out, per_format)`: many small, varied documents of the four formats.
- `large("xlsx1m", ...)`: that sheet's shape over 1,000,000 rows (200,000 in quick mode).
- `large("ods", ...)`: the xlsx sheet's shape as an OpenDocument spreadsheet (calamine reads it).

A file that exists already is reused (the content is a pure function of its name and size).
"""

from __future__ import annotations

import datetime as dt
import io
import random
import shutil
import struct
import subprocess
import tempfile
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path

FIXED = dt.datetime(2024, 1, 2, 3, 4, 5)
_VOCABULARY = (
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho "
    "sigma tau upsilon phi chi psi omega revenue margin quarter forecast region product "
    "customer order invoice budget target growth risk plan review market share index"
)
WORDS = _VOCABULARY.split()


def words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def sentence(rng: random.Random, n: int = 12) -> str:
    return words(rng, n).capitalize() + "."


def fix_zip(path: Path) -> None:
    """Rewrite an OOXML zip with fixed member times (byte-identical output for equal input)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            data = src.read(info.filename)
            fixed = zipfile.ZipInfo(info.filename, date_time=(2024, 1, 2, 3, 4, 6))
            fixed.compress_type = zipfile.ZIP_DEFLATED
            fixed.external_attr = 0o644 << 16
            dst.writestr(fixed, data)
    path.write_bytes(buf.getvalue())


def png(width: int, height: int, seed: int) -> bytes:
    """A small RGB PNG (a colour gradient), written without an imaging library."""

    def chunk(tag: bytes, data: bytes) -> bytes:
        body = tag + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    raw = b"".join(
        b"\0"
        + b"".join(
            bytes(((x * 7 + seed) % 256, (y * 5) % 256, (x + y + seed) % 256)) for x in range(width)
        )
        for y in range(height)
    )
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


# ---- xlsx ------------------------------------------------------------------------------------


def write_xlsx(path: Path, sheets: list[tuple[str, int, int]], seed: int) -> None:
    """Each sheet `(name, rows, columns)`: a header row, then mixed ints, floats, text, dates."""
    from openpyxl import Workbook

    rng = random.Random(seed)
    wb = Workbook(write_only=True)
    wb.properties.created = FIXED
    wb.properties.modified = FIXED
    wb.properties.title = f"Workbook {seed}"
    base = dt.date(2020, 1, 1)
    for name, rows, cols in sheets:
        ws = wb.create_sheet(name)
        ws.append([f"{WORDS[c % len(WORDS)].title()} {c}" for c in range(cols)])
        for r in range(rows - 1):
            row: list[object] = []
            for c in range(cols):
                kind = c % 5
                if kind == 0:
                    row.append(r + 1)
                elif kind == 1:
                    row.append(rng.choice(WORDS))
                elif kind == 2:
                    row.append(round(rng.random() * 1000, 2))
                elif kind == 3:
                    row.append(base + dt.timedelta(days=r % 1500))
                else:
                    row.append(rng.randint(-500, 500))
            ws.append(row)
    wb.save(str(path))
    fix_zip(path)


def write_xlsx_big(path: Path, rows: int, cols: int, seed: int) -> None:
    """One sheet of `rows` x `cols` shaped as `write_xlsx`'s (a header row, then ints, text,
    floats, dates, ints), its cells written as XML straight into the zip: openpyxl takes
    minutes over millions of cells. The small parts are those openpyxl writes for a 2-row
    sheet."""
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as scratch:
        small = Path(scratch, "small.xlsx")
        write_xlsx(small, [("Data", 2, cols)], seed=seed)
        with zipfile.ZipFile(small) as src:
            parts = {i.filename: src.read(i.filename) for i in src.infolist()}
    sheet = parts.pop("xl/worksheets/sheet1.xml")
    head = sheet[: sheet.index(b"<sheetData>") + len(b"<sheetData>")]
    tail = sheet[sheet.index(b"</sheetData>") :]
    letters = [chr(ord("A") + c) for c in range(cols)]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as dst:
        for name, data in parts.items():
            dst.writestr(_fixed_info(name), data)
        with dst.open(_fixed_info("xl/worksheets/sheet1.xml"), "w", force_zip64=True) as out:
            out.write(head)
            cells = "".join(
                f'<c r="{x}1" t="inlineStr"><is><t>{WORDS[c % len(WORDS)].title()} {c}</t></is></c>'
                for c, x in enumerate(letters)
            )
            out.write(f'<row r="1">{cells}</row>'.encode())
            batch: list[str] = []
            for r in range(rows - 1):
                n = r + 2
                row = [f'<row r="{n}">']
                for c, x in enumerate(letters):
                    kind = c % 5
                    if kind == 0:
                        row.append(f'<c r="{x}{n}" t="n"><v>{r + 1}</v></c>')
                    elif kind == 1:
                        word = rng.choice(WORDS)
                        row.append(f'<c r="{x}{n}" t="inlineStr"><is><t>{word}</t></is></c>')
                    elif kind == 2:
                        row.append(
                            f'<c r="{x}{n}" t="n"><v>{round(rng.random() * 1000, 2)}</v></c>'
                        )
                    elif kind == 3:
                        row.append(f'<c r="{x}{n}" s="1" t="n"><v>{43831 + r % 1500}</v></c>')
                    else:
                        row.append(f'<c r="{x}{n}" t="n"><v>{rng.randint(-500, 500)}</v></c>')
                row.append("</row>")
                batch.append("".join(row))
                if len(batch) == 10_000:
                    out.write("".join(batch).encode())
                    batch = []
            out.write("".join(batch).encode())
            out.write(tail)


def _fixed_info(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=(2024, 1, 2, 3, 4, 6))
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    return info


def write_ods(path: Path, rows: int, cols: int, seed: int) -> None:
    """One sheet of `rows` x `cols` (header row, then ints, text, floats, dates, ints), as
    OpenDocument XML (fixtures/builders/ods.py writes the package)."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from fixtures.builders.ods import MANIFEST, MIME, NS, Cell, cell, row, table, write_package

    rng = random.Random(seed)
    base = dt.date(2020, 1, 1)
    lines = [row(*(cell(f"{WORDS[c % len(WORDS)].title()} {c}") for c in range(cols)))]
    for r in range(rows - 1):
        values: list[Cell] = []
        for c in range(cols):
            kind = c % 5
            if kind == 0:
                values.append(float(r + 1))
            elif kind == 1:
                values.append(rng.choice(WORDS))
            elif kind == 2:
                values.append(round(rng.random() * 1000, 2))
            elif kind == 3:
                values.append(("date", (base + dt.timedelta(days=r % 1500)).isoformat()))
            else:
                values.append(float(rng.randint(-500, 500)))
        lines.append(row(*(cell(v) for v in values)))
    content = (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<office:document-content {NS} '
        'office:version="1.2"><office:body><office:spreadsheet>'
        f"{table('Data', lines)}</office:spreadsheet></office:body></office:document-content>"
    )
    write_package(path, MIME, {"META-INF/manifest.xml": MANIFEST, "content.xml": content})


# ---- pdf -------------------------------------------------------------------------------------


def write_pdf(
    path: Path,
    pages: int,
    seed: int,
    paragraphs: int = 3,
    table: bool = True,
    *,
    compress: bool | None = None,
) -> None:
    """`compress=False`: content streams left as plain text (reportlab's default otherwise)."""
    from reportlab.lib import colors
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate, Table, TableStyle

    rng = random.Random(seed)
    styles = getSampleStyleSheet()
    story: list[object] = []
    for p in range(pages):
        story.append(Paragraph(f"Section {p + 1}: {words(rng, 3).title()}", styles["Heading1"]))
        for _ in range(paragraphs):
            story.append(Paragraph(" ".join(sentence(rng) for _ in range(5)), styles["BodyText"]))
        if table:
            data = [[f"Col {c + 1}" for c in range(5)]] + [
                [
                    f"{rng.choice(WORDS)} {r}" if c == 0 else str(rng.randint(0, 9999))
                    for c in range(5)
                ]
                for r in range(7)
            ]
            t = Table(data)
            t.setStyle(TableStyle([("GRID", (0, 0), (-1, -1), 0.5, colors.black)]))
            story.append(t)
        if p < pages - 1:
            story.append(PageBreak())
    doc = SimpleDocTemplate(
        str(path), pagesize=A4, invariant=1, title=f"Report {seed}", pageCompression=compress
    )
    doc.build(story)


# ---- pptx ------------------------------------------------------------------------------------


def write_pptx(path: Path, slides: int, seed: int, picture: bytes | None = None) -> None:
    from pptx import Presentation
    from pptx.util import Inches

    rng = random.Random(seed)
    deck = Presentation()
    deck.core_properties.created = FIXED
    deck.core_properties.modified = FIXED
    deck.core_properties.last_printed = FIXED
    deck.core_properties.title = f"Deck {seed}"
    for s in range(slides):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = f"Slide {s + 1}: {words(rng, 3).title()}"
        body = slide.placeholders[1]
        body.width = Inches(4.5)
        frame = body.text_frame
        for b in range(5):
            para = frame.paragraphs[0] if b == 0 else frame.add_paragraph()
            para.text = words(rng, 6)
            para.level = 0 if b % 2 == 0 else 1
        rows, cols = 4, 3
        table = slide.shapes.add_table(
            rows, cols, Inches(5.2), Inches(1.6), Inches(4.2), Inches(1.6)
        ).table
        for r in range(rows):
            for c in range(cols):
                table.cell(r, c).text = f"H{c}" if r == 0 else str(rng.randint(0, 999))
        if picture is not None:
            slide.shapes.add_picture(io.BytesIO(picture), Inches(5.2), Inches(3.6), Inches(2))
        slide.notes_slide.notes_text_frame.text = sentence(rng, 20)
    deck.save(str(path))
    fix_zip(path)


# ---- docx ------------------------------------------------------------------------------------


def write_docx(path: Path, sections: int, seed: int, table_rows: int = 20) -> None:
    """`sections` headings, each with paragraphs and a bulleted and a numbered list."""
    from docx import Document

    rng = random.Random(seed)
    doc = Document()
    doc.core_properties.created = FIXED
    doc.core_properties.modified = FIXED
    doc.core_properties.last_printed = FIXED
    doc.core_properties.title = f"Document {seed}"
    for s in range(sections):
        doc.add_heading(f"Chapter {s + 1}: {words(rng, 3).title()}", level=1)
        for _ in range(3):
            doc.add_paragraph(" ".join(sentence(rng) for _ in range(4)))
        doc.add_heading(f"Details {s + 1}", level=2)
        for _ in range(3):
            doc.add_paragraph(words(rng, 6), style="List Bullet")
        for _ in range(2):
            doc.add_paragraph(words(rng, 6), style="List Number")
        if s == sections // 2 and table_rows:
            table = doc.add_table(rows=table_rows, cols=5)
            table.style = "Table Grid"
            for r, row in enumerate(table.rows):
                for c, cell in enumerate(row.cells):
                    cell.text = f"Head {c}" if r == 0 else f"{rng.choice(WORDS)} {r * 5 + c}"
    doc.save(str(path))
    fix_zip(path)


# ---- entry points ----------------------------------------------------------------------------


def large(kind: str, out: Path, quick: bool) -> Path:
    """The large file of one format (smaller with `quick`)."""
    tag = "quick" if quick else "full"
    name = "large-rows.xlsx" if kind == "xlsx1m" else f"large.{kind}"
    path = out / f"large-{tag}" / name
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name("tmp-" + path.name)
    if kind == "xlsx":
        write_xlsx(tmp, [("Data", 10_000 if quick else 50_000, 10)], seed=1)
    elif kind == "xlsx1m":  # 1,000,000 rows x 10 (issue 37); quick: 200,000
        write_xlsx_big(tmp, 200_000 if quick else 1_000_000, 10, seed=6)
    elif kind == "ods":
        write_ods(tmp, 10_000 if quick else 50_000, 10, seed=5)
    elif kind == "xls":
        # No Python library writes .xls: LibreOffice converts the large .xlsx (BIFF8 holds
        # up to 65,536 rows, so all 50,000).
        _soffice_convert(large("xlsx", out, quick), "xls", tmp)
    elif kind == "pdf":
        write_pdf(tmp, 50 if quick else 200, seed=2)
    elif kind == "pptx":
        write_pptx(tmp, 25 if quick else 100, seed=3, picture=png(64, 48, 3))
    elif kind == "docx":
        # 24 sections x 9 paragraphs + 20x5 table: ~220 paragraphs like the file.
        write_docx(tmp, 6 if quick else 24, seed=4)
    else:
        raise ValueError(kind)
    tmp.rename(path)
    return path


def _soffice_convert(source: Path, suffix: str, target: Path) -> None:
    """`source` converted by LibreOffice (`soffice`, headless, a private profile) to `target`."""
    with tempfile.TemporaryDirectory() as scratch:
        profile = Path(scratch, "profile").as_uri()
        subprocess.run(
            [
                "soffice",
                f"-env:UserInstallation={profile}",
                "--headless",
                "--convert-to",
                suffix,
                "--outdir",
                scratch,
                str(source),
            ],
            check=True,
            capture_output=True,
            timeout=600,
        )
        written = Path(scratch, f"{source.stem}.{suffix}")
        if not written.exists():  # soffice exits 0 when the module for this format is absent
            raise RuntimeError(
                f"soffice wrote no .{suffix} from {source.name}: is the LibreOffice module "
                f"for it installed (Debian: libreoffice-calc-nogui for spreadsheets)?"
            )
        shutil.move(written, target)


def small(kind: str, path: Path, i: int, compress: bool | None = None) -> None:
    """One small document; sizes vary with `i` (`compress`: `write_pdf`'s)."""
    rng = random.Random(1000 + i)
    if kind == "xlsx":
        sheets = [
            (f"Sheet{n + 1}", rng.randint(5, 60), rng.randint(2, 8)) for n in range(1 + i % 3)
        ]
        write_xlsx(path, sheets, seed=i)
    elif kind == "pdf":
        write_pdf(
            path, 1 + i % 4, seed=i, paragraphs=1 + i % 3, table=i % 2 == 0, compress=compress
        )
    elif kind == "pptx":
        write_pptx(path, 1 + i % 5, seed=i, picture=png(16, 12, i) if i % 3 == 0 else None)
    elif kind == "docx":
        write_docx(path, 1 + i % 4, seed=i, table_rows=(3 + i % 6) if i % 2 == 0 else 0)


def built_once(root: Path, build: Callable[[Path], None]) -> Path:
    """`root`, filled by `build(root)` unless a previous build completed (a `.complete`
    marker); an interrupted build is removed and started again."""
    done = root / ".complete"
    if done.exists():
        return root
    if root.exists():
        shutil.rmtree(root)
    build(root)
    done.write_text("ok\n")
    return root


def folder(out: Path, per_format: int) -> Path:
    """`per_format` small documents of each format in sub-folders, built once."""

    def build(root: Path) -> None:
        for kind in ("xlsx", "pdf", "pptx", "docx"):
            sub = root / kind
            sub.mkdir(parents=True)
            for i in range(per_format):
                small(kind, sub / f"{kind}-{i:04d}.{kind}", i)

    return built_once(out / f"folder-{per_format}", build)
