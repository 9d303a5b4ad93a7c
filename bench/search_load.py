"""Do costly searches of other sessions slow a page read? (issue 31, item 3)

    .venv/bin/python bench/search_load.py [--rounds 5] [--reads 4]

Starts `dpe-server serve --transport http` as a real process on the documents of
`tests/e2e/test_search_load.py` (four documents of 36,000 words from a 20,000-word vocabulary,
and a book whose chapters are pages), waits until everything is extracted, then, in each
round, times `--reads` uncached Level 2 page reads of one session alone, then as many while 20
other sessions each send the costliest search the bounds allow (32 one-character prefixes;
`SEARCHES` of them run, the others are told the server is busy). Prints every read and the
ratio of the medians, under load against alone (the issue's bound: 2). Rounds alternate alone
and under load, so a change in the machine's load falls on both sides. The test of the same
name shows without a clock that no read waits for a search; this measures how much the shared
cores slow it. Not part of the test command.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402

from tests.e2e import test_search_load as load  # noqa: E402
from tests.e2e.harness import connect, host_of, http_server, settled  # noqa: E402


async def run(folder: Path, rounds: int, reads: int) -> None:
    with http_server(folder) as server:
        async with connect("http", "legacy", folder, url=server.url, read_timeout=300) as reader:
            host = await host_of(reader)
            await settled(reader, host, timeout=600)
            docs = (await reader.list_resources()).resources
            ref = next(d.uri for d in docs if d.name == "The Book").split("/")[3]
            pages = iter(itertools.count(load.FIRST_UNCACHED))  # each read once: uncached
            for _ in range(5):
                await load.read_page(reader, host, ref, next(pages))  # warm up the code paths
            alone: list[float] = []
            during: list[float] = []
            for n in range(rounds):
                alone += [
                    await load.read_page(reader, host, ref, next(pages)) for _ in range(reads)
                ]
                answered, outcomes = anyio.Event(), list[tuple[str, float]]()
                async with contextlib.AsyncExitStack() as stack:
                    searchers = [
                        await stack.enter_async_context(
                            connect("http", "legacy", folder, url=server.url, read_timeout=600)
                        )
                        for _ in range(load.SEARCHERS)
                    ]
                    async with anyio.create_task_group() as tg:
                        for client in searchers:
                            tg.start_soon(load.worst_search, client, answered, outcomes)
                        await answered.wait()
                        for _ in range(reads):
                            during.append(await load.read_page(reader, host, ref, next(pages)))
                print(
                    f"round {n + 1}: alone {_ms(alone[-reads:])}; beside the searches "
                    f"{_ms(during[-reads:])}; answers {sorted(o for o, _ in outcomes)}"
                )
            ratio = statistics.median(during) / statistics.median(alone)
            print(
                f"median read alone {statistics.median(alone) * 1000:.0f} ms, beside "
                f"{load.SEARCHERS} worst-case searches {statistics.median(during) * 1000:.0f} ms: "
                f"{ratio:.2f}x (bound 2); load average {os.getloadavg()[0]:.1f} on "
                f"{os.cpu_count()} cores"
            )


def _ms(seconds: list[float]) -> str:
    return ", ".join(f"{s * 1000:.0f}" for s in seconds) + " ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--reads", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=ROOT / "bench" / "out") as tmp:
        folder = Path(tmp) / "docs"
        folder.mkdir()
        load.words_docs(folder)
        pages = load.FIRST_UNCACHED + 5 + 2 * args.rounds * args.reads
        load.book(folder / "book.docx", pages)
        anyio.run(run, folder, args.rounds, args.reads)


if __name__ == "__main__":
    main()
