"""OCR bench (issue 20): seconds per scanned page, and a folder of scanned pages listed and
recognised.

    python bench/ocr.py [--engine auto|tesseract|rapidocr] [--workers N] [--runs N]
                        [--pages N] [--long N] [--pictures N] [--scans] [--tesseract]
                        [--skip-pages] [--skip-folder] [--skip-long] [--a4 N]

`--engine` (auto: Tesseract when found, else RapidOCR) is the engine every part but
`--tesseract` runs; CPU seconds count the engine's subprocesses (Tesseract's) too.

1. Per page: the English and Chinese fixture pages (`fixtures/builders/scanned.py`) extracted
   by the pdf extractor in this process, the engine loaded first (not timed; its load time
   is printed apart); the median of `--runs` runs (5), with the word recall of the result.
2. Folder: `--pages` (20) one-page scanned pdfs (the English page with different seeds) in
   `bench/out/ocr/folder`, served by a `Catalog` over the worker processes as `dpe-server
   serve` does (no cache): the time until the folder is listed (probes only: no OCR), until
   every text layer is extracted (the warm-up), and until every page is recognised (the
   background pass, one job a page, on every worker), with how many pages say `ocr: true`;
   on one worker first (`--pages` × one page's time), then on the pool (`--workers`), whose
   time is compared with the first's divided by its workers.
3. Long scan: one scanned pdf of `--long` (40) pages (the English page with different
   seeds), served the same way: the same times, and seconds per page.
4. `--pictures N` (0: not run): a folder of N docx, each the fixture's picture of a table
   (`scanned.write_docx`), served the same way: its text is read first, its pictures after.
5. `--scans`: the pages scanned badly (`scanned.build_scans`: English, Chinese and Arabic fed
   sideways and skewed 3°, two columns, a borderless table; PNG pictures, 200 dpi letter) and
   the English page redrawn as an A4 page at 300 dpi, read by the picture extractor in this
   process: CPU seconds per page and the recall of each.
6. `--a4 N`: the A4 page alone, N times after the engine's start, nothing printed (for
   callgrind: `--a4 1` less `--a4 0`).
7. `--tesseract`: the same two pages' images recognised by the `tesseract` command (Debian's
   tesseract-ocr, tesseract-ocr-chi-sim), for the engine choice (docs/ocr.md).

Prints Markdown lines; figures are wall times on this machine at its load (printed first).
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402

from dpe_server.catalog.catalog import Catalog, Change  # noqa: E402
from dpe_server.extractors import Limits, for_path  # noqa: E402
from dpe_server.extractors.ocr import engine  # noqa: E402
from dpe_server.extractors.ocr.settings import engine_name  # noqa: E402
from dpe_server.extractors.pdf.extract import extract  # noqa: E402
from dpe_server.isolation.workers import ProcessBackend, WorkerSettings  # noqa: E402
from fixtures.builders import scanned  # noqa: E402

OUT = ROOT / "bench" / "out" / "ocr"
LIMITS = [Limits()]
"""The limits every part runs under (`--engine` sets its engine)."""
WORKERS = [WorkerSettings()]
"""The worker pool the folders are served on (`--workers`)."""


def _cpu() -> float:
    """CPU seconds of this process and its reaped children (Tesseract's runs)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _text(path: Path) -> tuple[float, float, str]:
    """Wall and CPU seconds of extracting the page (one engine thread: on an idle core the
    two agree; on a busy machine CPU seconds say what the page costs), and its OCR text."""
    start, cpu = time.perf_counter(), _cpu()
    with path.open("rb") as f:
        page = extract(f, LIMITS[0]).pages[0]
    took, used = time.perf_counter() - start, _cpu() - cpu
    text = "\n".join(str(e.content.get("text", "")) for e in page.elements if e.metadata.get("ocr"))
    return took, used, text


def per_page(runs: int) -> None:
    files = scanned.build_pictures(OUT / "pages")
    start = time.perf_counter()
    engine.available(LIMITS[0].ocr_engine)
    print(
        f"- engine {engine_name(LIMITS[0].ocr_engine)}: load {time.perf_counter() - start:.2f} s "
        "(once per worker process)"
    )
    for path, recall in (
        (OUT / "pages" / "scanned_en.pdf", scanned.recall_en),
        (OUT / "pages" / "scanned_zh.pdf", scanned.recall_zh),
    ):
        if path not in files:
            print(f"- {path.name}: not built (no CJK font)")
            continue
        times, cpus, text = [], [], ""
        for _ in range(runs):
            took, used, text = _text(path)
            times.append(took)
            cpus.append(used)
        print(
            f"- {path.name}: median {statistics.median(times):.2f} s per page "
            f"(min {min(times):.2f}, max {max(times):.2f}, n={runs}), "
            f"CPU {statistics.median(cpus):.2f} s; recall {recall(text):.3f}"
        )


async def _serve(where: Path, label: str, pages: int) -> float:
    """Serve `where` as `dpe-server serve` does (worker processes, no cache): the time until
    it is listed (probes), until every text layer is extracted (the warm-up: pages to
    recognise say `pending`), and until every page is recognised (the background pass, one
    job a page, on every worker: returned, from the text layers); seconds per page is the
    median time between two pages recognised. CPU seconds are this process's and its
    workers' (reaped at the end)."""
    recognised_at: list[float] = []

    async def listen(change: Change) -> None:
        if change.updated:
            recognised_at.append(time.perf_counter())

    before = os.times()
    backend = ProcessBackend(WORKERS[0], LIMITS[0])
    catalog = Catalog(where, "local.dpe.bench", backend, listen, limits=LIMITS[0])
    try:
        start = time.perf_counter()
        await catalog.start()
        listed = time.perf_counter() - start
        await catalog.warm()
        text_layer = time.perf_counter() - start
        await catalog.recognise_pending()
        done = time.perf_counter() - start
        states = []
        for entry in list(catalog._entries.values()):
            for info in await catalog.page_infos(entry.doc_ref):
                states.append(info.metadata.get("ocr"))
    finally:
        await backend.aclose()
    after = os.times()
    cpu = sum(after[:4]) - sum(before[:4])
    gaps = [b - a for a, b in itertools.pairwise(recognised_at)]
    per_page = statistics.median(gaps) if gaps else done - text_layer
    print(
        f"- {label}, {WORKERS[0].pool_size} workers: listed in {listed:.2f} s, every text "
        f"layer in {text_layer:.2f} s, every page recognised in {done:.1f} s "
        f"({per_page:.2f} s per page, median of {len(gaps)}; {cpu / pages:.2f} CPU-s per page "
        f"with the workers'); {states.count(True)}/{pages} pages say ocr: true"
        + (f", {states.count('failed')} failed" if "failed" in states else "")
    )
    return done - text_layer


async def folder(pages: int) -> None:
    """The folder of `pages` one-page scans on one worker (`pages` × one page's time, the
    workers warm), then on the pool (`--workers`): its time against that / the workers."""
    where = OUT / "folder"
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir(parents=True)
    for n in range(pages):
        image = scanned.page_image(scanned.EN_TITLE, scanned.EN_TEXT, False, 100 + n)
        scanned.write_pdf(where / f"scan_{n:02d}.pdf", [image])
    pool = WORKERS[0]
    times = []
    for settings in (WorkerSettings(workers=1), pool) if pool.pool_size > 1 else (pool,):
        WORKERS[0] = settings
        times.append(await _serve(where, f"folder of {pages} one-page scans", pages))
    WORKERS[0] = pool
    if len(times) == 2:
        ideal = times[0] / pool.pool_size
        print(
            f"- on {pool.pool_size} workers in {times[1]:.1f} s against {pages} pages x "
            f"{times[0] / pages:.2f} s (one worker) / {pool.pool_size} = {ideal:.1f} s: "
            f"{times[1] / ideal:.2f} times (target 1.6)"
        )


async def long_scan(pages: int) -> None:
    where = OUT / "long"
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir(parents=True)
    images = [scanned.page_image(scanned.EN_TITLE, scanned.EN_TEXT, False, n) for n in range(pages)]
    scanned.write_pdf(where / f"scan_{pages}_pages.pdf", images)
    await _serve(where, f"one scanned pdf of {pages} pages", pages)


async def pictures(count: int) -> None:
    where = OUT / "pictures"
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir(parents=True)
    scanned.write_docx(where / "table_00.docx")
    for n in range(1, count):
        shutil.copyfile(where / "table_00.docx", where / f"table_{n:02d}.docx")
    await _serve(where, f"folder of {count} docx, each a picture of a table", count)


def scans(runs: int) -> None:
    """`--scans` (see the module)."""
    from PIL import Image

    where = OUT / "scans"
    files = scanned.build_scans(where)
    a4 = scanned.clean_page(scanned.EN_TITLE, scanned.EN_TEXT, False)
    a4 = scanned._scan(a4.resize((2480, 3208), Image.Resampling.LANCZOS), 5, tilt=3.0)
    a4 = a4.crop((0, 0, 2480, 3508)) if a4.height >= 3508 else a4
    a4.save(where / "a4_300dpi_en.png", dpi=(300, 300))
    checks = {
        "turned_en.png": scanned.recall_en,
        "turned_zh.png": scanned.recall_zh,
        "turned_ar.png": scanned.recall_ar,
        "columns_en.png": lambda t: scanned.recall_words(scanned.LEFT_TEXT + scanned.RIGHT_TEXT, t),
        "table_en.png": lambda t: scanned.recall_words(
            [" ".join(r) for r in scanned.PRICE_LIST], t
        ),
        "a4_300dpi_en.png": scanned.recall_en,
    }
    for name, recall in checks.items():
        path = where / name
        if path not in files and name != "a4_300dpi_en.png":
            print(f"- {name}: not built (no font)")
            continue
        extractor = for_path(path)
        assert extractor is not None
        times, cpus, text = [], [], ""
        for _ in range(runs):
            start, cpu = time.perf_counter(), _cpu()
            with path.open("rb") as f:
                page = extractor.extract(f, LIMITS[0]).pages[0]
            times.append(time.perf_counter() - start)
            cpus.append(_cpu() - cpu)
            text = "\n".join(str(e.content) for e in page.elements if e.metadata.get("ocr") is True)
        read_by = page.metadata.get("ocr_engine")
        print(
            f"- {name} ({read_by}): median {statistics.median(times):.2f} s (n={runs}), "
            f"CPU {statistics.median(cpus):.2f} s; recall {recall(text):.3f}"
        )


def a4_once(times: int) -> None:
    """`--a4 N`: the A4 page (`--scans` builds it) extracted N times after the engine's start on
    a 1400 x 400 crop of it, nothing printed: for callgrind, `--a4 1` less `--a4 0` is one warm
    page's instructions (Tesseract's library runs in this process)."""
    import io

    from PIL import Image

    path = OUT / "scans" / "a4_300dpi_en.png"
    extractor = for_path(path)
    assert extractor is not None
    crop = io.BytesIO()
    with Image.open(path) as page:
        page.convert("L").crop((100, 100, 1500, 500)).save(crop, "PNG", dpi=(300, 300))
    extractor.extract(crop, LIMITS[0])
    for _ in range(times):
        with path.open("rb") as f:
            extractor.extract(f, LIMITS[0])


def tesseract(runs: int) -> None:
    if shutil.which("tesseract") is None:
        print("- tesseract: not installed (apt-get install tesseract-ocr tesseract-ocr-chi-sim)")
        return
    for name, title, lines, cjk, lang, recall in (
        ("en", scanned.EN_TITLE, scanned.EN_TEXT, False, "eng", scanned.recall_en),
        ("zh", scanned.ZH_TITLE, scanned.ZH_TEXT, True, "chi_sim", scanned.recall_zh),
    ):
        if cjk and not scanned.CJK_FONT.exists():
            continue
        png = OUT / f"tesseract_{name}.png"
        scanned.page_image(title, lines, cjk, 1 if name == "en" else 2).save(png)
        times, cpus, text = [], [], ""
        for _ in range(runs):
            start, before = time.perf_counter(), os.times()
            text = subprocess.run(
                ["tesseract", str(png), "-", "-l", lang],
                capture_output=True,
                text=True,
                check=True,
                env={**os.environ, "OMP_THREAD_LIMIT": "1"},
            ).stdout
            times.append(time.perf_counter() - start)
            after = os.times()
            cpus.append(
                after.children_user
                + after.children_system
                - before.children_user
                - before.children_system
            )
        print(
            f"- tesseract {lang} ({name} page image): median {statistics.median(times):.2f} s "
            f"(n={runs}), CPU {statistics.median(cpus):.2f} s; recall {recall(text):.3f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--long", type=int, default=40)
    parser.add_argument("--pictures", type=int, default=0)
    parser.add_argument("--tesseract", action="store_true")
    parser.add_argument("--scans", action="store_true")
    parser.add_argument("--engine", choices=("auto", "tesseract", "rapidocr"), default="auto")
    parser.add_argument("--workers", type=int, default=0, help="worker processes (0: cores)")
    parser.add_argument("--skip-folder", action="store_true")
    parser.add_argument("--skip-pages", action="store_true")
    parser.add_argument("--skip-long", action="store_true")
    parser.add_argument("--a4", type=int, default=-1, help="extract the A4 page N times, alone")
    args = parser.parse_args()
    LIMITS[0] = Limits(ocr_engine=args.engine)
    WORKERS[0] = WorkerSettings(workers=args.workers)
    if args.a4 >= 0:
        a4_once(args.a4)
        return
    load = os.getloadavg()[0]
    print(f"OCR bench: {os.cpu_count()} CPUs, load average {load:.1f}")
    if not args.skip_pages:
        per_page(args.runs)
    if args.scans:
        scans(args.runs)
    if args.tesseract:
        tesseract(args.runs)
    if not args.skip_folder:
        anyio.run(folder, args.pages)
    if not args.skip_long:
        anyio.run(long_scan, args.long)
    if args.pictures:
        anyio.run(pictures, args.pictures)


if __name__ == "__main__":
    main()
