"""A sheet whose cells' references lie outside their rows (issue 37): calamine places a cell by
its own reference and allocates the rectangle of those places, so `<row r="1">` holding
`<c r="XFD1048576">` was a grid of 17 billion cells and the process died; the extent was
taken from the rows' numbers. It is taken from the cells' references now (`xlsx.extent`):
such a sheet is read cell by cell, its two cells shown."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dpe_server.extractors.xlsx.extent import _between, cell_extent
from dpe_server.extractors.xlsx.scan import scan_sheet
from tests.hostile.cases import lying_extent

HEAD = b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
TAIL = b"</sheetData></worksheet>"
LYING = b'<row r="1"><c r="A1"><v>1</v></c><c r="XFD1048576"><v>2</v></c></row>'


def test_a_cell_past_its_row_makes_the_extent_and_the_sheet_is_not_dense() -> None:
    scan = scan_sheet(HEAD + LYING + TAIL, set())
    assert scan.bounds == (0, 0, 1048575, 16383)
    assert not scan.dense


def test_the_lying_sheet_is_read_without_the_process_dying(tmp_path: Path) -> None:
    """Extracted in a process of its own under a worker's address-space limit (2 GiB): the
    old code aborted it (calamine's allocation failed)."""
    path = tmp_path / "lying.xlsx"
    lying_extent(path, tmp_path)
    meta, contents = first_page_under_a_workers_limit(path)
    assert meta["used_range"] == "A1:XFD1048576"
    assert contents == [{"text": "1"}, {"text": "2"}]


@pytest.mark.parametrize(
    ("rows", "extent"),
    [
        # in order: the first and last cells make it, one search confirms it
        (b'<row r="3"><c r="B3"/><c r="C3"/></row><row r="40"><c r="A40"/></row>', (2, 39, 1)),
        # a cell between them outside: the search widens the guess and goes on
        (b'<row r="3"><c r="B3"/><c r="AB90"/></row><row r="40"><c r="A40"/></row>', (2, 89, 2)),
        (
            b'<row r="9"><c r="A9"/></row><row r="2"><c r="A2"/></row><row r="5"><c r="A1"/></row>',
            (0, 8, 1),
        ),
        # the reference not first among the attributes: every reference read
        (b'<row r="2"><c s="1" r="D2"/><c r="A7"/></row>', (1, 6, 1)),
    ],
)
def test_the_extent_comes_from_every_cells_reference(
    rows: bytes, extent: tuple[int, int, int]
) -> None:
    found = cell_extent(rows, b"", rows.count(b"<c "))
    assert found is not None
    assert (found.row0, found.row1, found.letters) == extent


def test_a_cell_without_a_reference_leaves_the_sheet_to_the_streaming_reader() -> None:
    rows = b'<row r="1"><c r="A1"/><c t="s"><v>0</v></c></row>'
    assert cell_extent(rows, b"", 2) is None
    tabbed = b'<row r="1"><c r="A1"/><c\tr="XFD1048576"><v>2</v></c></row>'
    # a cell the count of `<c ` did not see: found by the search, counted, placed
    assert cell_extent(tabbed, b"", 1) == (0, 1048575, 3, 2)


def test_between_matches_exactly_the_numbers_of_its_range() -> None:
    rng = random.Random(7)
    pairs = [(1, 1), (1, 9), (1, 10), (5, 50001), (99, 100), (1, 1048576), (1000, 1000)]
    pairs += [
        tuple(sorted((rng.randint(1, 2_000_000), rng.randint(1, 2_000_000)))) for _ in range(50)
    ]
    for lo, hi in pairs:
        pattern = re.compile("(?:" + "|".join(_between(lo, hi)) + r")\Z")
        near = [*range(max(lo - 12, 1), lo + 12), *range(max(hi - 12, 1), hi + 12)]
        for n in near + [rng.randint(1, 3_000_000) for _ in range(100)]:
            assert bool(pattern.match(str(n))) == (lo <= n <= hi), (lo, hi, n)
        assert not pattern.match("0" + str(lo))


def first_page_under_a_workers_limit(path: Path) -> tuple[dict[str, Any], list[Any]]:
    """The first page's metadata and its elements' contents, `path` extracted in a process of
    its own under a worker's address-space limit (2 GiB); the process must end well."""
    script = (
        "import json, resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n"
        "from pathlib import Path\n"
        "from dpe_server.extractors import DEFAULT_LIMITS, for_path\n"
        "p = Path(sys.argv[1])\n"
        "with p.open('rb') as f:\n"
        "    page = for_path(p).extract(f, DEFAULT_LIMITS).pages[0]\n"
        "print(json.dumps([page.metadata, [e.content for e in page.elements]]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 0, done.stderr[-2000:]
    meta, contents = json.loads(done.stdout)
    return meta, contents
