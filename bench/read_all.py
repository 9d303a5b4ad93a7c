"""Whole-process "convert the whole file" with dpe-server: the counterpart of `markitdown FILE`.

    python bench/read_all.py DIR CACHE_DIR

One process does what `dpe-server read DIR URI` does for one document (`OneShotReader`: no
MCP server, no event loop, no workers, the persistent cache in CACHE_DIR, the document parsed
in this process under the command's own memory cap and deadline, `dpe_server.isolation.guard`), for
every URI a client needs to get the whole document: the Level 1 page index (which extracts the
document fully), then every page as Markdown, written to stdout. One `dpe-server read`
process per page would pay the interpreter start-up once per page, which no user converting a
file would do; this is the honest whole-process equivalent.

It ends as `dpe-server read` does: its output flushed, without the interpreter's tear-down.
With BENCH_RUSAGE set, the peak resident size of this process plus that of its largest child,
if any (MB), is written to that file.
"""

from __future__ import annotations

import json
import os
import resource
import sys
from pathlib import Path

from dpe_server.extractors.gcpause import collector_paused
from dpe_server.isolation.guard import arm_deadline, disarm, limit_memory
from dpe_server.read.oneshot import OneShotReader
from dpe_server.views.render import Body


def convert(root: Path, cache_dir: Path) -> int:
    out = sys.stdout
    pages = 0
    limit_memory(2048 * 1024 * 1024)
    deadline = arm_deadline(60.0, "the document")
    # the cyclic garbage collector paused, as `dpe-server read` pauses it (`_read_document`)
    with collector_paused(), OneShotReader(root, cache_dir=cache_dir) as reader:
        for entry in reader.entries():
            base = f"dpe://{reader.host}/{entry.doc_ref}"
            count = int(json.loads(_text(reader.read(f"{base}?depth=pages")))["page_count"])
            for i in range(count):
                out.write(_text(reader.read(f"{base}/pages/{i}?format=markdown")))
                pages += 1
    disarm(deadline)
    return pages


def _text(bodies: list[Body]) -> str:
    return bodies[0].text or ""


def main() -> None:
    pages = convert(Path(sys.argv[1]), Path(sys.argv[2]))
    print(f"{pages} pages", file=sys.stderr)
    where = os.environ.get("BENCH_RUSAGE")
    if where:
        own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        Path(where).write_text(str((own + kids) / 1024))
    # As `dpe-server read` ends (`cli.command._exit_now`): output flushed, no tear-down.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
