"""The benchmark suite: one command, one table of ratios against the named baselines.

    .venv/bin/python bench/run.py [--quick] [--only NAME[,NAME...]]

NAME: xlsx, pdf, pptx, docx (rows 1a and 1b of that format), sheets (row 1e: .ods, .xls),
bigsheet (row 1f: 1,000,000 rows x 10), bug65649, pdf400, folder (rows 2
and 4), latency (row 3), bigelement (row 5). Inputs are generated from code into bench/out/
(git-ignored); markitdown is installed into bench/out/venv-markitdown on first use. See
bench/README.md for what each figure means.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))

import big_element
import gen
import serving
from measure import (
    PYTHON,
    Failed,
    Sample,
    Stats,
    alternate,
    dpe_whole,
    in_process,
    markitdown_venv,
    whole_process,
)

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
CORPUS = Path("/work/shared/corpus")
FORMATS = ("xlsx", "pdf", "pptx", "docx")
NAMES = (*FORMATS, "sheets", "bigsheet", "bug65649", "pdf400", "folder", "latency", "bigelement")
BARE = {
    "xlsx": "python-calamine, every cell",
    "pdf": "pypdf extract_text, all pages",
    "pptx": "python-pptx, every shape + notes",
    "docx": "python-docx, paragraphs + tables",
}
WHOLE_TARGET = {"xlsx": 0.1, "pdf": 0.1, "pptx": 0.2, "docx": 0.2}


@dataclass
class Row:
    figure: str
    ours: str
    base: str
    ratio: float | None
    """ours / baseline; None when one side is not measured."""
    target: float | None
    """The ratio must be at most this (None: informational)."""
    target_text: str
    extra: str = ""

    @property
    def result(self) -> str:
        if self.target is None:
            return "info"
        if self.ratio is None:
            return "n/a"
        return "PASS" if self.ratio <= self.target else "FAIL"


@dataclass
class Config:
    quick: bool
    runs_whole: int
    runs_inproc: int
    runs_serve: int
    runs_md_folder: int
    """markitdown over the whole folder takes minutes: fewer runs (said in the row)."""
    per_format: int
    reads: int
    distinct: int
    runs_burst: int
    """Bursts of concurrent reads of the big element (row 5), each on a fresh server."""
    md_bin: Path | None
    md_note: str


def _s(stats: Stats) -> str:
    return f"{stats.seconds:.3f} s"


def _mb(stats: Stats | str) -> str:
    return f"{stats.peak_mb:.0f}" if isinstance(stats, Stats) and stats.peak_mb else "-"


def _cpu(stats: Stats | str) -> str:
    return f"{stats.cpu:.2f}" if isinstance(stats, Stats) and stats.cpu is not None else "-"


def compare(
    figure: str, ours: Stats, base: Stats | str, target: float | None, target_text: str
) -> Row:
    extra = f"peak MB {_mb(ours)} / {_mb(base)}; CPU s {_cpu(ours)} / {_cpu(base)}; n={ours.runs}"
    if isinstance(base, str):
        return Row(figure, _s(ours), base, None, target, target_text, extra)
    return Row(figure, _s(ours), _s(base), ours.seconds / base.seconds, target, target_text, extra)


# ---- row 1: the large file of each format ----------------------------------------------------


def large_rows(kind: str, cfg: Config) -> list[Row]:
    path = gen.large(kind, OUT, cfg.quick)
    size = {"xlsx": "rows x 10", "pdf": "pages", "pptx": "slides", "docx": "sections"}[kind]
    rows: list[Row] = []
    folder = path.parent / kind  # a folder holding only this file, for the server
    folder.mkdir(exist_ok=True)
    if not (folder / path.name).exists():
        shutil.copy2(path, folder / path.name)
    cache = OUT / "cache" / f"whole-{kind}"
    base: Callable[[], Sample] | None = None
    if cfg.md_bin is not None:
        md = cfg.md_bin / "markitdown"
        base = lambda: whole_process([str(md), str(path)])  # noqa: E731
    runs = cfg.runs_whole if kind == "xlsx" or cfg.quick else cfg.runs_whole + 2
    ours, theirs = alternate(runs, lambda: dpe_whole(folder, cache), base)
    if isinstance(theirs, str) and cfg.md_bin is None:
        theirs = f"not measured ({cfg.md_note})"
    target = WHOLE_TARGET[kind]
    rows.append(
        compare(
            f"1a {kind} ({_n(kind, cfg)} {size}) whole process: dpe read_all vs `markitdown FILE`",
            ours,
            theirs,
            target,
            f"<= {target} ({round(1 / target)}x faster)",
        )
    )
    figure = f"1b {kind} in-process: EXTRACTOR.extract vs {BARE[kind]}"
    measures = ("dpe_extract", f"bare_{kind}")
    target, text = (2.0, "<= 2 (issue 17)") if kind == "pdf" else (3.0, "<= 3")
    rows.append(_in_process_row(cfg, path, measures, figure, target=target, text=text))
    if kind == "pdf":  # the text layer is PDFium's: the same against its bare page text
        figure = "1b pdf in-process: EXTRACTOR.extract vs pypdfium2 text of every page"
        measures = ("dpe_extract", "bare_pdfium")
        rows.append(_in_process_row(cfg, path, measures, figure, target=target, text=text))
        # the floor of the row above: the extractor's calls into PDFium alone
        figure = "1b pdf floor: the extractor's PDFium calls alone vs pypdfium2 text of every page"
        measures = ("pdfium_calls", "bare_pdfium")
        info = "info: no Python work"
        rows.append(_in_process_row(cfg, path, measures, figure, target=None, text=info))
    return rows


def _in_process_row(
    cfg: Config,
    path: Path,
    measures: tuple[str, str],
    figure: str,
    *,
    target: float | None,
    text: str,
) -> Row:
    """A row of two `inproc.py` measures (ours, the baseline) on `path`, alternated; `target`
    and `text` as `compare` takes them."""
    ours, base = measures
    ours_in, bare = alternate(
        cfg.runs_inproc,
        lambda: in_process(ours, path)[0],
        lambda: in_process(base, path)[0],
    )
    return compare(figure, ours_in, bare, target, text)


def sheets_rows(cfg: Config) -> list[Row]:
    """Row 1e: .ods (generated, the xlsx sheet's shape) and .xls (the large .xlsx converted by
    LibreOffice; without `soffice`, the small committed POI file) in-process against bare
    python-calamine reading every cell; markitdown reads neither without extras its bench
    install lacks, so it is not compared."""
    inputs = [
        (gen.large("ods", OUT, cfg.quick), f"ods ({_n('xlsx', cfg)} rows x 10)", 3.0, "<= 3"),
    ]
    if shutil.which("soffice"):  # the large .xlsx converted by LibreOffice
        xls = gen.large("xls", OUT, cfg.quick)
        inputs.append((xls, f"xls ({_n('xlsx', cfg)} rows x 10)", 3.0, "<= 3"))
    else:  # the one small committed file, whose time is the extractor's first-use imports
        xls = OUT.parent.parent / "fixtures" / "committed" / "poi-SampleSS.xls"
        inputs.append((xls, "xls (Apache POI SampleSS.xls, 17 KB)", None, "info: no soffice"))
    rows: list[Row] = []
    for path, what, target, target_text in inputs:
        ours, bare = alternate(
            cfg.runs_inproc,
            functools.partial(_first_sample, "dpe_extract", path),
            functools.partial(_first_sample, "bare_xlsx", path),
        )
        figure = f"1e {what} in-process: EXTRACTOR.extract vs python-calamine, every cell"
        rows.append(compare(figure, ours, bare, target, target_text))
    return rows


def big_sheet_rows(cfg: Config) -> list[Row]:
    """Row 1f (issue 37): the 1,000,000-row x 10 sheet (200,000 in quick mode) served by
    `dpe-server serve` with its default worker limits, start to Level 0 without `indexing`
    (its full extraction done in a worker), against python-calamine reading every cell in a
    process of its own; and in-process, `EXTRACTOR.extract` against that same read."""
    path = gen.large("xlsx1m", OUT, cfg.quick)
    folder = OUT / "bigsheet"
    folder.mkdir(exist_ok=True)
    if not (folder / path.name).exists():
        shutil.copy2(path, folder / path.name)
    rows_n = "200,000" if cfg.quick else "1,000,000"
    served: list[dict[str, object]] = []

    def ours() -> Sample:
        out = subprocess.run(
            [PYTHON, str(HERE / "big_sheet.py"), str(folder), str(OUT / "cache" / "bigsheet")],
            capture_output=True,
            text=True,
            check=False,
        )
        if out.returncode != 0:
            raise Failed(f"big_sheet.py exited {out.returncode}: {out.stderr.strip()[-200:]}")
        served.append(json.loads(out.stdout.strip().splitlines()[-1]))
        return Sample(
            float(str(served[-1]["settled"])), None, float(str(served[-1]["worker_peak_mb"]))
        )

    bare = [PYTHON, str(HERE / "inproc.py"), "bare_xlsx", str(path)]
    runs = 1 if cfg.quick else 3
    mine, theirs = alternate(runs, ours, lambda: whole_process(bare))
    row = compare(
        f"1f xlsx ({rows_n} rows x 10) served: `serve` start -> Level 0 without `indexing` "
        "(extracted in a worker, default limits) vs python-calamine every cell, whole process",
        mine,
        theirs,
        None,
        "info (issue 37)",
    )
    last = served[-1]
    row.extra = (
        f"peak MB worker {_mb(mine)} / calamine {_mb(theirs)}; Level 0 listed at "
        f"{float(str(last['listed'])):.1f} s; page 0 read {float(str(last['page0'])):.2f} s "
        f"({last['page0_chars']} chars); error {last['error']}; n={mine.runs}"
    )
    figure = f"1f xlsx ({rows_n} rows x 10) in-process: EXTRACTOR.extract vs {BARE['xlsx']}"
    rows = [row]
    rows.append(
        _in_process_row(cfg, path, ("dpe_extract", "bare_xlsx"), figure, target=None, text="info")
    )
    return rows


def _first_sample(name: str, path: Path) -> Sample:
    return in_process(name, path)[0]


def _n(kind: str, cfg: Config) -> str:
    full = {"xlsx": "50,000", "pdf": "200", "pptx": "100", "docx": "24"}
    quick = {"xlsx": "10,000", "pdf": "50", "pptx": "25", "docx": "6"}
    return (quick if cfg.quick else full)[kind]


def bug65649_rows(cfg: Config) -> list[Row]:
    path = CORPUS / "docx" / "poi__bug65649.docx"
    if not path.exists():
        return [Row("1c poi__bug65649.docx", "-", "corpus absent", None, 2.0, "<= 2")]
    ours, bare = alternate(
        cfg.runs_inproc,
        lambda: in_process("dpe_extract", path)[0],
        lambda: in_process("bare_docx_paragraphs", path)[0],
    )
    return [
        compare(
            "1c poi__bug65649.docx in-process: EXTRACTOR.extract vs python-docx paragraphs' text",
            ours,
            bare,
            2.0,
            "<= 2",
        )
    ]


def pdf400_rows(cfg: Config) -> list[Row]:
    found = [p for p in sorted((CORPUS / "pdf").glob("*400p*.pdf"))] if CORPUS.exists() else []
    if not found:
        return [Row("1d 400-page pdf, page 300", "-", "corpus absent", None, 20.0, "<= 20")]
    folder = OUT / "pdf400"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / found[0].name
    if not target.exists():
        shutil.copy2(found[0], target)
    index = "299"  # the 300th page
    ours, bare = alternate(
        cfg.runs_inproc,
        lambda: in_process("dpe_element", folder, index)[0],
        lambda: in_process("bare_pdf_page", target, index)[0],
    )
    return [
        compare(
            "1d 400-page corpus pdf: Level 3 of an element on page 300, uncached "
            "(DpeApp.read, parse in a worker) vs pypdf open + that page's extract_text",
            ours,
            bare,
            20.0,
            "<= 20",
        )
    ]


# ---- rows 2 and 4: a folder of small documents -----------------------------------------------


def folder_rows(cfg: Config) -> list[Row]:
    root = gen.folder(OUT, cfg.per_format).resolve()
    small = gen.folder(OUT, 1).resolve()
    n = 4 * cfg.per_format
    scratch = (OUT / "cache").resolve()
    scratch.mkdir(parents=True, exist_ok=True)
    cold, warm = anyio.run(serving.cold_and_warm, root, scratch, n, cfg.runs_serve)
    cold0, warm0 = anyio.run(serving.cold_and_warm, small, scratch, 4, cfg.runs_serve)
    listed = Stats([Sample(r.listed, None, None) for r in cold])
    settled = Stats([Sample(r.settled, None, None) for r in cold])
    restart = Stats([Sample(r.settled, None, None) for r in warm])
    md: Stats | str = f"not measured ({cfg.md_note})"
    if cfg.md_bin is not None:
        mdpy = str(cfg.md_bin / "python")
        runs = Stats()
        try:
            for _ in range(cfg.runs_md_folder):
                runs.samples.append(
                    whole_process([mdpy, str(Path(__file__).parent / "md_folder.py"), str(root)])
                )
            md = runs
        except Failed as exc:
            md = f"not measured ({exc})"
    errors = max(r.errors for r in cold)
    rows = [
        compare(
            f"2a {n} small docs: serve (stdio) start -> Level 0 lists all, cold cache, "
            f"vs markitdown converting the folder (Python API, 1 process)",
            listed,
            md,
            0.1,
            "<= 0.1",
        ),
        compare(
            f"2b {n} small docs: restart on the same cache -> Level 0 complete (no `indexing`) "
            "vs cold full extraction (start -> no `indexing`)",
            restart,
            settled,
            0.02,
            "<= 0.02",
        ),
    ]
    # What no server on this SDK can go below: the interpreter importing it, before it can
    # answer `initialize` (both protocol eras' pydantic models are built at import).
    sdk = Stats([whole_process([PYTHON, "-c", "import mcp.server.lowlevel"]) for _ in range(5)])
    rows.append(
        compare(
            "2b floor: a fresh interpreter importing the MCP SDK (`import mcp.server.lowlevel`, "
            "which `serve` needs before it can answer `initialize`) vs cold full extraction",
            sdk,
            settled,
            None,
            "for reference",
        )
    )
    rows[-1].extra += f"; {sdk.seconds / restart.seconds:.0%} of the warm restart"
    if isinstance(md, Stats):
        rows[0].extra = rows[0].extra.replace(f"n={listed.runs}", f"n={listed.runs} / {md.runs}")
    rows[0].extra += f"; cold full extraction {settled.seconds:.2f} s; {errors} docs in error"
    for label, big, zero in (
        ("after cold warm-up", cold, cold0),
        ("after warm restart", warm, warm0),
    ):
        rss_big = _median([r.rss_kb for r in big])
        rss_zero = _median([r.rss_kb for r in zero])
        per_doc = (rss_big - rss_zero) / (n - 4)
        rows.append(
            Row(
                f"4 server RSS growth per document, {n} vs 4 docs, {label}",
                f"{per_doc:.1f} KB/doc",
                "50 KB/doc",
                per_doc / 50,
                1.0,
                "< 50 KB/doc",
                f"RSS {rss_big / 1024:.0f} MB vs {rss_zero / 1024:.0f} MB; n={len(big)}",
            )
        )
    return rows


def _median(values: list[int]) -> float:
    import statistics

    return float(statistics.median(values))


# ---- row 3: latency --------------------------------------------------------------------------


def latency_rows(cfg: Config) -> list[Row]:
    root = gen.folder(OUT, cfg.per_format).resolve()
    cache = (OUT / "cache" / f"cache-{root.name}-0").resolve()  # warm if `folder` ran
    lat = anyio.run(serving.latency, root, cache, cfg.reads, cfg.distinct)
    rows: list[Row] = []
    p = serving.percentile
    for q in (0.5, 0.95):
        tag = f"p{round(q * 100)}"
        for label, values in (
            (f"{lat.distinct_pages} cached pages in a cycle (SQLite store)", lat.page_ms),
            ("one hot page (in-memory LRU)", lat.hot_ms),
        ):
            ours, base = p(values, q), p(lat.trivial_ms, q)
            rows.append(
                Row(
                    f"3 Level 2 read {tag}, {label}, vs trivial in-memory resource, same server",
                    f"{ours:.2f} ms",
                    f"{base:.2f} ms",
                    ours / base,
                    3.0,
                    "<= 3",
                    f"{cfg.reads} reads each, alternated, stdio + SDK Client",
                )
            )
    return rows


# ---- row 5: concurrent reads of one big element ----------------------------------------------


def big_element_rows(cfg: Config) -> list[Row]:
    path = CORPUS / "xlsx" / big_element.CORPUS_FILE.name
    what = f"Level 3 reads of the 16 MB table of {path.name} (corpus) over HTTP"
    if not path.exists():
        return [Row(f"5 {what}", "-", "corpus absent", None, 2.0, "<= 2")]
    rows: list[Row] = []
    for n, bursts in big_element.measure(path, [10, 40], cfg.runs_burst).items():
        m = big_element.median_burst(bursts)
        rows.append(
            Row(
                f"5 {n} concurrent {what}: peak RSS of the serving process vs its RSS at rest",
                f"{m.peak_mb:.0f} MB",
                f"{m.rest_mb:.0f} MB",
                m.peak_mb / m.rest_mb,
                2.0,
                "<= 2",
                f"RSS 2 s after: {m.after_mb:.0f} MB; all {n} answered in {m.all_s:.2f} s; "
                f"answer {m.answer_bytes / 1e6:.2f} MB; errors {m.errors}; n={len(bursts)}",
            )
        )
        rows.append(
            Row(
                f"5 {n} concurrent {what}: the slowest Level 0 read meanwhile vs Level 0 at rest",
                f"{m.slowest_l0_ms:.0f} ms",
                f"{m.idle_l0_ms:.1f} ms",
                m.slowest_l0_ms / m.idle_l0_ms,
                None,
                "for reference",
                f"Level 0 read back to back while the {n} reads are answered; n={len(bursts)}",
            )
        )
    return rows


# ---- the table -------------------------------------------------------------------------------


def print_table(rows: list[Row], cfg: Config, started: float, load: str) -> None:
    mode = "QUICK (smaller inputs, fewer runs)" if cfg.quick else "FULL"
    whole = cfg.runs_whole if cfg.quick else f"{cfg.runs_whole} (xlsx) or {cfg.runs_whole + 2}"
    print()
    print(
        f"dpe-server benchmark, {mode}; {os.cpu_count()} CPUs; load average at start {load}; "
        f"{cfg.md_note}; whole-process runs {whole}, in-process runs "
        f"{cfg.runs_inproc}, server runs {cfg.runs_serve}; medians (peak MB: max)"
    )
    print()
    print("| figure | dpe-server | baseline | ours/base | target | result | details |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(_line(r))
    print()
    print(f"took {time.monotonic() - started:.0f} s; load average at end {_load()}")


def _line(r: Row) -> str:
    ratio = f"{r.ratio:.3f}" if r.ratio is not None else "-"
    return (
        f"| {r.figure} | {r.ours} | {r.base} | {ratio} | {r.target_text} | {r.result} | {r.extra} |"
    )


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def compile_project() -> None:
    """Byte-compile dpe_server, as installing it from a wheel does.

    The baselines are installed by pip, which compiles them; this editable checkout is compiled
    on first import, unless PYTHONDONTWRITEBYTECODE is set (it is on some machines, this one
    among them), in which case every measured process would compile it from source again.
    """
    import compileall

    compileall.compile_dir(OUT.parent.parent / "dpe_server", quiet=1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small inputs, fewer runs (~3 min)")
    parser.add_argument("--only", default="", help=f"comma-separated subset of {', '.join(NAMES)}")
    args = parser.parse_args(argv)
    only = [n for n in args.only.split(",") if n] or list(NAMES)
    unknown = [n for n in only if n not in NAMES]
    if unknown:
        parser.error(f"unknown NAME {unknown}; choose from {', '.join(NAMES)}")
    started, load = time.monotonic(), _load()
    OUT.mkdir(exist_ok=True)
    compile_project()
    md_bin, md_note = markitdown_venv(OUT)
    quick = args.quick
    cfg = Config(
        quick=quick,
        runs_whole=3,
        runs_inproc=3 if quick else 5,
        runs_serve=1 if quick else 3,
        runs_md_folder=1,
        per_format=10 if quick else 250,
        reads=200 if quick else 300,
        distinct=100 if quick else 300,
        runs_burst=1 if quick else 5,
        md_bin=md_bin,
        md_note=md_note,
    )
    rows: list[Row] = []
    for name in only:
        print(f"measuring {name} ...", file=sys.stderr, flush=True)
        done = len(rows)
        try:
            if name in FORMATS:
                rows += large_rows(name, cfg)
            elif name == "sheets":
                rows += sheets_rows(cfg)
            elif name == "bigsheet":
                rows += big_sheet_rows(cfg)
            elif name == "bug65649":
                rows += bug65649_rows(cfg)
            elif name == "pdf400":
                rows += pdf400_rows(cfg)
            elif name == "folder":
                rows += folder_rows(cfg)
            elif name == "latency":
                rows += latency_rows(cfg)
            elif name == "bigelement":
                rows += big_element_rows(cfg)
        except Failed as exc:
            rows.append(Row(name, f"failed: {exc}", "-", None, None, "-"))
        for row in rows[done:]:  # as they come, in case a later row fails or is interrupted
            print(_line(row), file=sys.stderr, flush=True)
    print_table(rows, cfg, started, load)
    return 0


if __name__ == "__main__":
    sys.exit(main([a for a in sys.argv[1:] if a != PYTHON]))
