"""The watched folder's files: which ones count, their doc_refs, their versions.

- `doc_ref_for(rel)`: short, URL-safe (`[a-z0-9-]`), a slug of the file's stem plus a hash of
  its relative path, so it is stable across restarts and edits, and two `report.xlsx` in two
  folders do not collide.
- `is_ignored(rel)`: editor temp and lock files (`~$*`, `.~lock.*#`, `~WRL*.tmp`, `*.tmp`),
  dotfiles and anything under a dot folder.
- `scan(root)`: the candidate files and their stats, never entering or following a symlink;
  `scan_paths(root, rels)` the same for some paths only (what a watcher says changed).
- `content_fingerprint(root, rel)`: a cheap digest of a file's content, for where the file
  system's times are too coarse to tell two versions apart (`FileStat.coarse`).
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from dpe_server.extractors import is_supported
from dpe_server.isolation.confine import open_confined

_SLUG_RE = re.compile(r"[^a-z0-9]+")
SLUG_MAX = 24


def slug(text: str, fallback: str = "doc") -> str:
    """Lower-case ASCII letters and digits joined by single hyphens, at most 24 characters."""
    s = _SLUG_RE.sub("-", text.lower()).strip("-")[:SLUG_MAX].strip("-")
    return s or fallback


def stem_of(rel: str) -> str:
    """`PurePosixPath(rel).stem` of a relative path as the catalog holds it (no empty, `.`
    or `..` names), without building a path: the catalog asks it of every file."""
    name = rel.rstrip("/").rpartition("/")[2].rpartition("\0")[2]  # a child's: its own
    i = name.rfind(".")
    return name[:i] if 0 < i < len(name) - 1 else name


def doc_ref_for(rel: str, hash_chars: int = 6) -> str:
    """The doc_ref of the file at `rel` (a POSIX path relative to the root)."""
    digest = hashlib.sha256(rel.encode("utf-8")).hexdigest()[:hash_chars]
    return f"{slug(stem_of(rel))}-{digest}"


def default_host(root: Path) -> str:
    """`local.dpe.<slug of the directory name>`: two servers on two folders do not collide."""
    return f"local.dpe.{slug(root.name, 'root')}"


def is_ignored(rel: str) -> bool:
    """Editor temp and lock files, dotfiles, and anything inside a dot folder."""
    parts = [part for part in rel.split("/") if part and part != "."]  # PurePosixPath's
    if any(part.startswith(".") for part in parts):
        return True
    return _temporary(parts[-1] if parts else "")


_TEMPORARY_ENDS = (".tmp", ".temp", ".part", ".crdownload", "~")


def _temporary(name: str) -> bool:
    """An editor's temp or lock file (`~$report.docx`, `~WRL0001.tmp`, `report.docx~`) or a
    download in progress."""
    return name.startswith("~") or name.lower().endswith(_TEMPORARY_ENDS)


def is_candidate(rel: str) -> bool:
    """A file the catalog serves: supported suffix, not ignored."""
    return is_supported(rel) and not is_ignored(rel)


@dataclass(frozen=True, slots=True)
class FileStat:
    """What `stat` says of one version of a file.

    `ctime_ns` moves on every write and cannot be set back (`os.utime` sets only the access
    and modification times), so an in-place rewrite that restores the size and the mtime is
    still another version.
    """

    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int

    @property
    def coarse(self) -> bool:
        """The mtime is a whole second, as on FAT (2 s), HFS+ (1 s) and some network mounts,
        where ctime is as coarse or is the creation time: two writes within one tick can leave
        every time as it was, and only the content tells the versions apart."""
        return self.mtime_ns % 1_000_000_000 == 0


def relative(root: Path, path: Path) -> str | None:
    """`path` relative to `root` as a POSIX string, or None when it is not inside."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return None


def scan(root: Path) -> dict[str, FileStat]:
    """Every candidate file below `root` that is a regular file reached without entering or
    following a symlink, with its stat (one `lstat` per file, from the listing that found it),
    in the order doc_refs are assigned in (each folder's entries sorted, depth first)."""
    return dict(_files(str(root), ""))


def scan_paths(root: Path, rels: Iterable[str]) -> tuple[dict[str, FileStat], set[str]]:
    """`scan` restricted to the paths `rels` (relative, POSIX) and what is below them: the
    candidate files found there, and the paths that may have held files below them (a folder
    now, or nothing now: it may have been a folder). A path under a dot folder, or whose parent
    is not a folder reached without a symlink, holds no candidate file.
    """
    found: dict[str, FileStat] = {}
    subtrees: set[str] = set()
    reachable: dict[str, bool] = {"": True}
    for rel in sorted(set(rels)):
        parent = rel.rpartition("/")[0]
        st = _lstat(root, rel) if _reachable(root, parent, reachable) else None
        if st is None or stat.S_ISDIR(st.st_mode):
            subtrees.add(rel)
            if st is not None and not rel.rpartition("/")[2].startswith("."):
                found.update(_files(str(root / rel), rel + "/"))
        elif stat.S_ISREG(st.st_mode) and is_candidate(rel):
            found[rel] = _file_stat(st)
    return found, subtrees


def _lstat(root: Path, rel: str) -> os.stat_result | None:
    try:
        return os.lstat(root / rel)
    except OSError:
        return None


def _reachable(root: Path, folder: str, known: dict[str, bool]) -> bool:
    """Whether the folder `folder` (relative) is one `scan` enters: each of its ancestors a
    real folder, none a symlink nor a dot folder."""
    if folder not in known:
        parent, _, name = folder.rpartition("/")
        st = _lstat(root, folder)
        known[folder] = (
            not name.startswith(".")
            and st is not None
            and stat.S_ISDIR(st.st_mode)
            and _reachable(root, parent, known)
        )
    return known[folder]


def _file_stat(st: os.stat_result) -> FileStat:
    return FileStat(st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def _files(top: str, top_prefix: str) -> Iterator[tuple[str, FileStat]]:
    stack = [(top, top_prefix)]
    while stack:
        folder, prefix = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in sorted(entries, key=lambda e: e.name):
            if entry.name.startswith("."):
                continue
            rel = prefix + entry.name
            try:
                if entry.is_symlink():
                    continue
                if entry.is_dir(follow_symlinks=False):
                    stack.append((entry.path, rel + "/"))
                    continue
                # (`is_candidate`: no folder on the way is a dot folder, and nor is the name)
                if not is_supported(entry.name) or _temporary(entry.name):
                    continue
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                yield rel, _file_stat(st)


FINGERPRINT_BLOCK = 64 * 1024
FINGERPRINT_BLOCKS = 5


def content_fingerprint(root: Path, rel: str) -> str:
    """A blake2b digest of the content of `root/rel`, read as `open_confined` opens it; "" when
    it cannot be read.

    A file of at most 5 × 64 KiB is digested whole; a larger one by its size and five 64 KiB
    blocks: the first, the last (where a zip keeps its central directory, with every member's
    CRC, and a pdf its cross-reference table and trailer) and three evenly spaced between. So
    a same-size rewrite that leaves all five sampled blocks alone is not seen.
    """
    digest = hashlib.blake2b(digest_size=16)
    try:
        with open_confined(root, rel) as f:
            size = os.fstat(f.fileno()).st_size
            digest.update(size.to_bytes(8, "little"))
            if size <= FINGERPRINT_BLOCK * FINGERPRINT_BLOCKS:
                digest.update(f.read(size))
            else:
                step = (size - FINGERPRINT_BLOCK) // (FINGERPRINT_BLOCKS - 1)
                for i in range(FINGERPRINT_BLOCKS):
                    f.seek(i * step)
                    digest.update(f.read(FINGERPRINT_BLOCK))
    except OSError:
        return ""
    return digest.hexdigest()
