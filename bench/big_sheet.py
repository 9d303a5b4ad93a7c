"""Row 1f (issue 37): a 1,000,000-row x 10 xlsx served by `dpe-server serve` as it runs by
default (worker processes under their 2 GiB address-space limit and 60 s deadline).

    python bench/big_sheet.py FOLDER CACHE_DIR

FOLDER holds the one workbook. Prints one JSON line: seconds from the server's start to the
first Level 0 read listing the document (`listed`) and to the one where it is no longer
`indexing` (`settled`: its full extraction done in a worker), seconds to then read page 0 as
Markdown (`page0`, from the cache), that page's size, the error Level 0 gives if any, and the
peak resident size of the largest worker (`worker_peak_mb`, its VmHWM) and of the server.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

import anyio
from mcp import Client

sys.path.insert(0, str(Path(__file__).resolve().parent))

from serving import _level0, _params, _text, server_pid

from dpe_server.catalog.folder import default_host


def _hwm_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _workers(server: int) -> list[int]:
    text = ""
    for task in Path(f"/proc/{server}/task").iterdir():
        text += (task / "children").read_text()
    return [int(p) for p in text.split()]


async def served(root: Path, cache: Path) -> dict[str, object]:
    shutil.rmtree(cache, ignore_errors=True)
    cache.parent.mkdir(parents=True, exist_ok=True)
    host = default_host(root.resolve())
    log = cache.parent / f"{cache.name}.log"
    start = time.perf_counter()
    listed = settled = 0.0
    async with Client(_params(root, cache, log), mode="legacy", read_timeout_seconds=600) as c:
        while True:
            docs = await _level0(c, host)
            now = time.perf_counter() - start
            if docs and not listed:
                listed = now
            if docs and not any(d.get("indexing") for d in docs):
                settled = now
                break
            await anyio.sleep(0.05)
        server = server_pid()
        workers = _workers(server)
        worker_peak = max((_hwm_mb(p) for p in workers), default=0.0)
        t0 = time.perf_counter()
        page = _text(await c.read_resource(f"dpe://{host}/{docs[0]['doc_ref']}/pages/0"))
        page0 = time.perf_counter() - t0
        return {
            "listed": listed,
            "settled": settled,
            "page0": page0,
            "page0_chars": len(page),
            "error": docs[0].get("error"),
            "worker_peak_mb": worker_peak,
            "server_peak_mb": _hwm_mb(server),
            "workers": len(workers),
        }


def main() -> None:
    out = anyio.run(served, Path(sys.argv[1]), Path(sys.argv[2]))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
