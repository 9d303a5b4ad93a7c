"""Every word Word, PowerPoint, Excel or LibreOffice shows of an office file is served: the word
check of the pdf pages (`check/fidelity.py`: the same normalisation, the same served text,
Level 2 Markdown with cut tables read whole at Level 3) against `check/officetext.py`'s reading
of the same file, made from its XML without the server's extractors (a Word document's text
runs of body, headers, footers, notes and comments; a deck's of slides, notes, comments and
SmartArt; a workbook's cell text, comments and drawings; an OpenDocument file's paragraphs).
A document's words may sit on any of its pages, so the served text is every page's. Every
word of every office fixture and of every office file of ../shared/corpus, but the files
listed below one by one with the reason, each checked by looking at the file; a listed file
that passes fails the test, so the list stays exact."""

from __future__ import annotations

import os
import zipfile
from collections import Counter
from pathlib import Path

import pytest

from dpe_server.check.fidelity import PageWords, compare, served_document, words
from dpe_server.check.officetext import TYPES, document_text
from dpe_server.extractors import DEFAULT_LIMITS, for_path
from dpe_server.model.tree import Category, Document
from tests.corpus_trees import Outcome
from tests.corpus_trees import _extract as extracted

SUFFIXES = frozenset(f".{kind}" for kind in TYPES)
PROTECTED = frozenset({"protected-secret.docx", "protected-velvet.xlsx"})
"""Fixtures encrypted with a password, no zip package the reader can open: the first served
`encrypted`, the second decrypted by the server with Excel's built-in password."""
NOT_OOXML = frozenset({"xls-renamed-as.xlsx"})
"""A legacy workbook under an xlsx suffix (read as the .xls it is): no XML to read."""
NOT_SERVED: dict[str, str] = {
    "poi__poc-shared-strings.xlsx": "its one shared string is 1,048,576 letters long, 32 times "
    "Excel's own limit on a cell's text (xlsx/format.py CELL_MAX_CHARS, 32,767): served cut "
    "there, the page and the document saying `truncated`; the cut word is not the whole one",
    "poi__ConditionalFormattingSamples.xlsx": "no word lost: a header cell wrapped by hand, "
    "'Percen-' then a line break then 'tile', is one word 'percentile' to the normalisation "
    "(a hyphen at a line end joins), and is served as 'Percen-<br>tile' in the table's "
    "Markdown, both halves there",
}
"""Files with words the reader shows and the server does not serve, with the reason, each
checked by looking at the file."""


def recall(path: Path, doc: Document) -> PageWords:
    """The words of the file at `path` as the reader shows them, against all `doc`'s pages."""
    return compare(0, document_text(path), served_document(doc.pages))


_UNREADABLE = PROTECTED | NOT_OOXML
FIXTURES = [
    name
    for name in sorted(os.listdir(Path(__file__).parents[2] / "fixtures"))
    if Path(name).suffix.lower() in SUFFIXES and name not in _UNREADABLE
]


def test_every_office_kind_has_fixtures() -> None:
    kinds = {Path(name).suffix for name in FIXTURES}
    assert {".docx", ".pptx", ".xlsx", ".odt", ".odp", ".ods", ".fodt", ".fodp", ".fods"} <= kinds


@pytest.mark.parametrize("name", FIXTURES)
def test_every_word_of_an_office_fixture_is_served(fixture_dir: Path, name: str) -> None:
    outcome = extracted(str(fixture_dir / name))  # as the corpus files are
    assert outcome.doc is not None, outcome.message
    found = recall(fixture_dir / name, outcome.doc)
    assert found.found > 0, name
    assert found.missing == (), name


@pytest.mark.corpus
def test_every_word_of_an_office_corpus_file_is_served(
    corpus_outcomes: dict[Path, Outcome],
) -> None:
    judged: list[tuple[float, str]] = []
    failures: list[str] = []
    listed_but_whole: list[str] = []
    words = lost = 0
    for path, outcome in corpus_outcomes.items():
        if path.suffix.lower() not in SUFFIXES:
            continue
        if outcome.doc is None:  # served as its error (encrypted, damaged): the sweeps' matter
            assert outcome.kind not in ("timeout", "crash"), f"{path.name}: {outcome.message}"
            continue
        found = recall(path, outcome.doc)
        judged.append((found.recall, path.name))
        if path.name not in NOT_SERVED:
            words += found.found
            lost += len(found.missing)
        if found.missing and path.name not in NOT_SERVED:
            failures.append(f"{path.name}: {found.recall:.4f}, missing {list(found.missing)[:20]}")
        elif not found.missing and path.name in NOT_SERVED:
            listed_but_whole.append(path.name)
    judged.sort()
    by_kind = Counter(Path(name).suffix for _, name in judged)
    print(f"\n{len(judged)} documents {dict(by_kind)}, {words} words (the listed files' aside)")
    print(f"recall {1 - lost / max(words, 1)}, below 1.0: {sum(r < 1 for r, _ in judged)}")
    print(f"worst: {judged[:8]}")
    assert {Path(name).suffix for _, name in judged} >= {".docx", ".pptx", ".xlsx"}
    assert failures == []
    assert listed_but_whole == [], "listed as not served, yet every word is: take them off"


def _pivot(fixture_dir: Path, tmp_path: Path, location: bytes) -> tuple[Path, Document]:
    """The fixture workbook with its pivot table's `<location>` attributes set to `location`
    (its area, A3:B6, holds "Row Labels | Sum of Units" over two products and a total)."""
    path = tmp_path / "pivot.xlsx"
    source = zipfile.ZipFile(fixture_dir / "xlsx-constructs.xlsx")
    with source as old, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as new:
        for item in old.infolist():
            data = old.read(item)
            if item.filename == "xl/pivotTables/pivotTable1.xml":
                assert b'firstHeaderRow="0" firstDataRow="1"' in data
                data = data.replace(b'firstHeaderRow="0" firstDataRow="1"', location)
            new.writestr(item, data)
    extractor = for_path(path)
    assert extractor is not None
    with path.open("rb") as f:
        return path, extractor.extract(f, DEFAULT_LIMITS)


def test_the_captions_above_a_pivot_tables_header_row_are_served(
    fixture_dir: Path, tmp_path: Path
) -> None:
    """A pivot table with column fields (`firstHeaderRow="1" firstDataRow="2"`: Excel writes
    the data caption, "Sum of Units", and "Column Labels" in the row above its headers) serves
    that row's words too: they were cut from the pivot table and, the pivot's cells being its
    own, served nowhere (poi__ExcelPivotTableSample.xlsx lost "Summe von Field2" so)."""
    path, doc = _pivot(fixture_dir, tmp_path, b'firstHeaderRow="1" firstDataRow="2"')
    (page,) = (p for p in doc.pages if p.title == "Pivot")
    categories = [e.category for e in page.elements]
    assert categories.index(Category.TABLE) < categories.index(Category.PIVOT_TABLE)  # in order
    (pivot,) = (e for e in page.elements if e.category is Category.PIVOT_TABLE)
    assert pivot.content["headers"] != ["Row Labels", "Sum of Units"]  # the caption row's cut
    found = recall(path, doc)
    assert {"row", "labels", "sum", "units"} <= words(document_text(path))
    assert found.missing == ()


def test_a_pivot_table_without_column_fields_has_its_first_row_as_headers(
    fixture_dir: Path, tmp_path: Path
) -> None:
    """Without column fields Excel writes `firstHeaderRow` equal to `firstDataRow` (1): the
    headers ("Row Labels", the data field's name) are the area's first row, the row above the
    data (poi__ExcelPivotTableSample.xlsx's Tabelle3 took its first data row as headers)."""
    _, doc = _pivot(fixture_dir, tmp_path, b'firstHeaderRow="1" firstDataRow="1"')
    (page,) = (p for p in doc.pages if p.title == "Pivot")
    (pivot,) = (e for e in page.elements if e.category is Category.PIVOT_TABLE)
    assert pivot.content["headers"] == ["Row Labels", "Sum of Units"]
    assert [row[0] for row in pivot.content["rows"]] == [
        "XS-PRODUCT-1",
        "XS-PRODUCT-2",
        "Grand Total",
    ]


_W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
_MC = 'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"'
_M = 'xmlns:m="http://schemas.openxmlformats.org/officeDocument/2006/math"'


def test_the_reader_asks_only_for_words_an_application_shows(tmp_path: Path) -> None:
    """Deleted text, field codes, an equation's runs (served as LaTeX) and an
    `mc:Fallback` are not shown as text: their words are not asked of the server; runs of
    one word stay one word, and a text box's paragraph is apart from the text around it."""
    body = (
        "<w:p><w:r><w:t>shown</w:t></w:r><w:r><w:t>together</w:t></w:r>"
        "<w:del><w:r><w:delText>deletedword</w:delText></w:r></w:del>"
        "<w:r><w:instrText>HYPERLINK fieldcode</w:instrText></w:r>"
        "<m:oMath><m:r><m:t>mathrun</m:t></m:r></m:oMath>"
        "<w:r><mc:AlternateContent><mc:Choice><w:txbxContent><w:p><w:r><w:t>choicebox</w:t>"
        "</w:r></w:p></w:txbxContent></mc:Choice><mc:Fallback><w:t>fallbackbox</w:t>"
        "</mc:Fallback></mc:AlternateContent></w:r></w:p>"
    )
    path = tmp_path / "shown.docx"
    with zipfile.ZipFile(path, "w") as package:
        package.writestr(
            "word/document.xml", f"<w:document {_W} {_MC} {_M}><w:body>{body}</w:body></w:document>"
        )
    assert words(document_text(path)) == {"showntogether", "choicebox"}


def test_the_reader_asks_of_speaker_notes_their_body_only(tmp_path: Path) -> None:
    """What the notes pane shows is the notes slide's body placeholder: its footer and other
    placeholders are a printed notes page's, not speaker notes (KEY02.pptx's copyright
    footer)."""
    ns = 'xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" ' + (
        'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"'
    )

    def shape(kind: str, text: str) -> str:
        return (
            f'<p:sp><p:nvSpPr><p:nvPr><p:ph type="{kind}"/></p:nvPr></p:nvSpPr><p:txBody>'
            f"<a:p><a:r><a:t>{text}</a:t></a:r></a:p></p:txBody></p:sp>"
        )

    path = tmp_path / "notes.pptx"
    with zipfile.ZipFile(path, "w") as package:
        package.writestr(
            "ppt/slides/slide1.xml", f"<p:sld {ns}>{shape('title', 'slideword')}</p:sld>"
        )
        package.writestr(
            "ppt/notesSlides/notesSlide1.xml",
            f"<p:notes {ns}>{shape('body', 'speakerword')}{shape('ftr', 'footerword')}</p:notes>",
        )
    assert words(document_text(path)) == {"slideword", "speakerword"}
