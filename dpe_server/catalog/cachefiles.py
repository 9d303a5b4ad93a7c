"""Files in the cache folder that no server will open again, removed once unused for long.

The folder holds the cache of the current format (`cache-v{SCHEMA}.sqlite3`, with SQLite's
`-wal` and `-shm` beside it), and may hold caches of older formats (a server of an earlier
version wrote them; this one never reads them) and caches moved aside as unusable
(`….broken-{stamp}`, kept to be looked at). At 100,000 documents such a file is a gigabyte.
Each is removed when the server opens the folder, once none of its files has been written for
`sqlite.UNUSED_DAYS` days: a server of an older version still sharing the folder writes its
cache when it restarts, searches or sees a change (the marks of what it serves), so its cache
is kept while it is used (one that does none of these for a month loses it, and extracts
again at its next start).
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

log = logging.getLogger(__name__)

_CACHE_FILE = re.compile(r"cache-v(\d+)\.sqlite3(-wal|-shm)?(\.broken-[0-9-]+)?")


def remove_unused(folder: Path, schema: str, unused_since: float) -> list[str]:
    """Remove the caches in `folder` of formats older than `schema`, and those moved aside,
    whose files were all last written before `unused_since` (epoch seconds); returns the
    names removed. A file that cannot be read or removed is left, silently."""
    groups: dict[tuple[str, str], list[Path]] = {}
    try:
        names = [p for p in folder.iterdir() if p.is_file()]
    except OSError:
        return []
    for path in names:
        match = _CACHE_FILE.fullmatch(path.name)
        if match is None:
            continue
        version, _, broken = match.groups()
        if broken or int(version) < int(schema):
            groups.setdefault((version, broken or ""), []).append(path)
    removed: list[str] = []
    for paths in groups.values():
        try:
            if max(p.stat().st_mtime for p in paths) >= unused_since:
                continue
            for path in paths:
                path.unlink(missing_ok=True)
                removed.append(path.name)
        except OSError:
            continue
    if removed:
        log.info("removed %d unused cache files from %s: %s", len(removed), folder, removed)
    return removed
