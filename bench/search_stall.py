"""Does one `search` call stall the other sessions? (issue 14, item 3)

    .venv/bin/python bench/search_stall.py [--per-format 6] [--query-chars 1000]

Starts `dpe-server serve --transport http` as a real process on the generated folder of
`gen.folder` (`--per-format` small documents of each format), waits until every document is
extracted, then runs `--searches` searches one after the other in one session while a second
session reads Level 0 (`dpe://HOST`) back to back. The query is four one-character words that
every element's text holds (JSON punctuation), repeated up to `--query-chars` characters: a
matcher that compares each word of the query looks for and counts every one of them in
every element (the server now compares each distinct word once). Prints, per search, how long it
took and what it answered, and the Level 0 reads answered meanwhile: how many, p50 and max
latency. When matching blocks the event loop, the max is about the search's own duration.
Not part of the test command; inputs go under `bench/out/`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402
import gen  # noqa: E402  (bench/, the folder of this script, is on sys.path)
import mcp_types as types  # noqa: E402
from mcp import Client  # noqa: E402

from tests.e2e.harness import host_of, http_server, settled  # noqa: E402

COMMON = ("revenue", "margin", "alpha", "beta")
"""Words of the generated documents' vocabulary, in many of their elements. (Before the index
of issue 21 these were `{ } " :`, held by every element's JSON; a query of punctuation now
has no word to look for.)"""


def query(chars: int) -> str:
    """The terms of `COMMON` repeated up to `chars` characters."""
    words = [COMMON[n % len(COMMON)] for n in range(max(chars // 7, len(COMMON)))]
    return " ".join(words)[: max(chars, 1)].rsplit(" ", 1)[0]


async def _reads(
    url: str, host: str, reading: anyio.Event, stop: anyio.Event, spans: list[tuple[float, float]]
) -> None:
    async with Client(url, mode="legacy", read_timeout_seconds=600, cache=None) as client:
        while not stop.is_set():
            start = time.perf_counter()
            await client.read_resource(f"dpe://{host}")
            spans.append((start, time.perf_counter()))
            reading.set()


async def run(folder: Path, text: str, searches: int) -> None:
    with http_server(folder) as server:
        async with Client(server.url, mode="legacy", read_timeout_seconds=600) as client:
            host = await host_of(client)
            await settled(client, host, timeout=600)
            for n in range(searches):
                reading, stop, spans = anyio.Event(), anyio.Event(), []
                async with anyio.create_task_group() as tg:
                    tg.start_soon(_reads, server.url, host, reading, stop, spans)
                    await reading.wait()
                    start = time.perf_counter()
                    result = await client.call_tool("search", {"query": text})
                    end = time.perf_counter()
                    stop.set()
                # every read in flight while the search ran, the one it held up included
                during = sorted(t1 - t0 for t0, t1 in spans if t1 > start and t0 < end)
                item = result.content[0]
                assert isinstance(item, types.TextContent)
                answer = item.text if result.is_error else _summary(item.text)
                p50 = during[len(during) // 2] * 1000 if during else float("nan")
                worst = during[-1] * 1000 if during else float("nan")
                print(
                    f"search {n + 1}: {end - start:.2f} s, {answer}; Level 0 reads meanwhile: "
                    f"{len(during)}, p50 {p50:.0f} ms, max {worst:.0f} ms"
                )


def _summary(text: str) -> str:
    body = json.loads(text)
    return f"total {body['total']}, indexing {body.get('indexing', 'n/a')}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-format", type=int, default=6)
    parser.add_argument("--query-chars", type=int, default=1000)
    parser.add_argument("--searches", type=int, default=3)
    args = parser.parse_args()
    folder = gen.folder(ROOT / "bench" / "out", args.per_format)
    text = query(args.query_chars)
    print(f"{args.per_format * 4} documents, a query of {len(text):,} characters")
    anyio.run(run, folder, text, args.searches)


if __name__ == "__main__":
    main()
