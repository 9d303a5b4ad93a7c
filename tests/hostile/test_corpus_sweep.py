"""The server over all of ../shared/corpus, as a real HTTP process under the production limits:
every file listed, each with a tree or an error kind, zero crashes, zero hangs (every read
answered; a parse past its deadline is killed and answered `timeout`),
and the time and the error kinds printed as a table (run with `-s` to see it). The fixture is
module-scoped: the sweep runs once for the four tests."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import anyio
import pytest
from mcp import Client

from dpe_server.catalog.folder import scan
from tests.e2e.harness import http_server
from tests.hostile.test_hostile import _listed, _relative, _text, outcome_of, vm_hwm_mb

pytestmark = [
    pytest.mark.corpus,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]
SWEEP_LIMIT_SECONDS = 240.0
CONCURRENT_READS = 8


@dataclass
class Sweep:
    root: Path
    expected: set[str]
    outcomes: dict[str, str] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    total: float = 0.0
    alive: bool = False
    peak_mb: float = 0.0
    beside_before: list[str] = field(default_factory=list)
    beside_after: list[str] = field(default_factory=list)


async def _read_all(url: str, sweep: Sweep) -> None:
    # A read may queue behind background warm-up parses of 60 s each: wait long, not forever.
    async with Client(url, mode="auto", read_timeout_seconds=SWEEP_LIMIT_SECONDS) as client:
        listed = await _listed(client)
        limiter = anyio.Semaphore(CONCURRENT_READS)

        async def one(rel: str, uri: str) -> None:
            async with limiter:
                start = time.monotonic()
                try:
                    payload = json.loads(await _text(client, f"{uri}?depth=pages"))
                    sweep.outcomes[rel] = outcome_of(payload)
                except Exception as exc:  # a failed read is a finding: recorded, asserted
                    sweep.failures[rel] = repr(exc)[:200]
                sweep.seconds[rel] = time.monotonic() - start

        start = time.monotonic()
        with anyio.fail_after(SWEEP_LIMIT_SECONDS):
            async with anyio.create_task_group() as tg:
                for file_uri, uri in listed.items():
                    tg.start_soon(one, _relative(sweep.root, file_uri), uri)
        sweep.total = time.monotonic() - start


@pytest.fixture(scope="module")
def sweep(corpus: Path) -> Iterator[Sweep]:
    result = Sweep(corpus, set(scan(corpus.resolve())))
    result.beside_before = sorted(p.name for p in corpus.parent.iterdir())
    with http_server(corpus, "--page-size", "100", "--no-watch", "--ocr", "off") as server:
        anyio.run(_read_all, server.url, result, backend="asyncio")
        result.alive = server.process.poll() is None
        result.peak_mb = vm_hwm_mb(server.process.pid)
    result.beside_after = sorted(p.name for p in corpus.parent.iterdir())
    _print_table(result)
    return result


def _print_table(sweep: Sweep) -> None:
    by_format: dict[str, Counter[str]] = {}
    for rel, outcome in sweep.outcomes.items():
        fmt = PurePosixPath(rel).parts[0]
        by_format.setdefault(fmt, Counter())[outcome] += 1
    kinds = sorted({k for c in by_format.values() for k in c})
    print(
        f"\ncorpus sweep: {len(sweep.outcomes)} files in {sweep.total:.1f} s "
        f"(server VmHWM {sweep.peak_mb:.0f} MB, {len(sweep.failures)} failed reads)"
    )
    print(f"  {'folder':8}" + "".join(f"{k:>12}" for k in kinds) + f"{'total':>8}")
    for fmt in sorted(by_format):
        row = by_format[fmt]
        print(f"  {fmt:8}" + "".join(f"{row[k]:>12}" for k in kinds) + f"{sum(row.values()):>8}")
    timeouts = sorted(rel for rel, o in sweep.outcomes.items() if o == "timeout")
    if timeouts:
        print("  timeouts: " + ", ".join(timeouts))
    slowest = sorted(sweep.seconds.items(), key=lambda kv: -kv[1])[:5]
    print("  slowest: " + ", ".join(f"{rel} {s:.1f} s" for rel, s in slowest))


def test_corpus_sweep_lists_every_file(sweep: Sweep) -> None:
    assert set(sweep.outcomes) | set(sweep.failures) == sweep.expected


def test_corpus_sweep_every_read_answers(sweep: Sweep) -> None:
    assert sweep.failures == {}


def test_corpus_sweep_no_hang(sweep: Sweep) -> None:
    """Every read answered in time; a parse past its deadline is answered as `timeout` (the
    worker was killed), listed in the table, and is the extractor's to speed up."""
    assert sweep.total < SWEEP_LIMIT_SECONDS


def test_corpus_sweep_server_survives(sweep: Sweep) -> None:
    assert sweep.alive


def test_corpus_sweep_writes_nothing_beside_the_corpus(sweep: Sweep) -> None:
    """The server's cache goes to a temporary folder, never beside the documents it serves."""
    assert sweep.beside_after == sweep.beside_before
