"""Confinement to the served folder: a file is opened only when it is a regular file inside the
root with no symlink on the way, and the descriptor that was checked is the one parsed (no swap
between check and use)."""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePosixPath
from typing import BinaryIO


def _parts(rel: str) -> tuple[str, ...] | None:
    """The components of a relative path inside the root, or None when it could leave it
    (absolute, `..`, empty, a NUL byte, a backslash)."""
    if not rel or "\0" in rel or "\\" in rel or rel.startswith("/"):
        return None
    parts = PurePosixPath(rel).parts
    if not parts or any(p in ("", ".", "..") or "/" in p for p in parts):
        return None
    return parts


class NotConfined(OSError):
    """The file is a symlink, not a regular file, or resolves outside the root."""


def open_confined(root: Path, rel: str) -> BinaryIO:
    """Open `root/rel` read-only, refusing symlinks anywhere on the path and non-regular files.

    Each component is opened relative to its parent's descriptor with O_NOFOLLOW, so a
    component swapped for a symlink after a check is refused, and the returned file is the
    one that was checked.
    """
    parts = _parts(rel)
    if parts is None:
        raise NotConfined(f"not a path inside the folder: {rel!r}")
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    directory = getattr(os, "O_DIRECTORY", 0)
    cloexec = getattr(os, "O_CLOEXEC", 0)
    fd = os.open(root, os.O_RDONLY | directory | cloexec)
    try:
        for part in parts[:-1]:
            try:
                nxt = os.open(part, os.O_RDONLY | directory | nofollow | cloexec, dir_fd=fd)
            except OSError as exc:
                raise NotConfined(f"{rel}: a folder on the way is a symlink or gone") from exc
            os.close(fd)
            fd = nxt
        try:
            # O_NONBLOCK: a FIFO swapped in must not block the open; it is refused below.
            file_fd = os.open(
                parts[-1], os.O_RDONLY | nofollow | cloexec | os.O_NONBLOCK, dir_fd=fd
            )
        except OSError as exc:
            raise NotConfined(f"{rel}: the file is a symlink or gone") from exc
    finally:
        os.close(fd)
    if not stat.S_ISREG(os.fstat(file_fd).st_mode):
        os.close(file_fd)
        raise NotConfined(f"{rel}: not a regular file")
    os.set_blocking(file_fd, True)
    return os.fdopen(file_fd, "rb")
