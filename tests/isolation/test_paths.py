"""Path confinement, tested the way the MCP filesystem server is (after CVE-2025-53109/53110):
on real temporary folders, with sibling prefixes, `..`, symlink chains, a symlinked root, a
file swapped for a symlink between check and use, and null bytes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dpe_server.catalog import folder as paths
from dpe_server.catalog.folder import relative, scan
from dpe_server.isolation.confine import NotConfined, open_confined
from dpe_server.isolation.jobs import Job, run_job
from dpe_server.surface.app import Settings

SECRET = b"SECRET-OUTSIDE"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """tmp/root (served) with a.docx and sub/b.docx; tmp/root2 and tmp/outside beside it."""
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "a.docx").write_bytes(b"inside-a")
    (root / "sub" / "b.docx").write_bytes(b"inside-b")
    (tmp_path / "root2").mkdir()
    (tmp_path / "root2" / "secret.docx").write_bytes(SECRET)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.docx").write_bytes(SECRET)
    return root


def _refused(root: Path, rel: str) -> bool:
    try:
        open_confined(root, rel).close()
    except NotConfined:
        return True
    return False


def test_paths_regular_files_open(tree: Path) -> None:
    with open_confined(tree, "sub/b.docx") as f:
        assert f.read() == b"inside-b"


def test_paths_sibling_prefix_is_not_inside(tree: Path) -> None:
    sibling = tree.parent / "root2" / "secret.docx"
    assert relative(tree, sibling) is None
    assert str(sibling).startswith(str(tree))  # the string-prefix trap this guards against


@pytest.mark.parametrize(
    "rel",
    ["../root2/secret.docx", "../outside/secret.docx", "sub/../a.docx", "sub/..", ""],
    ids=["sibling-prefix", "parent", "dotdot-inside", "dotdot-last", "empty"],
)
def test_paths_dot_components_refused(tree: Path, rel: str) -> None:
    assert _refused(tree, rel)
    result = run_job(Job(str(tree), rel or "x.docx/..", "probe"))
    assert result["error"]["kind"] == "unsupported"  # type: ignore[index]


def test_paths_open_confined_absolute_path(tree: Path) -> None:
    assert _refused(tree, str(tree.parent / "outside" / "secret.docx"))


def test_paths_jobs_refuse_absolute_path(tree: Path) -> None:
    outside = str(tree.parent / "outside" / "secret.docx")
    result = run_job(Job(str(tree), outside, "extract"))
    assert result["error"]["kind"] == "unsupported"  # type: ignore[index]
    assert "SECRET" not in str(result)


def test_paths_symlink_chain_out_refused(tree: Path) -> None:
    os.symlink(tree.parent / "outside" / "secret.docx", tree / "hop2.docx")
    os.symlink(tree / "hop2.docx", tree / "hop1.docx")
    assert _refused(tree, "hop1.docx")
    assert _refused(tree, "hop2.docx")
    assert "hop1.docx" not in scan(tree)


def test_paths_symlink_inside_the_root_refused_too(tree: Path) -> None:
    os.symlink(tree / "a.docx", tree / "alias.docx")
    assert _refused(tree, "alias.docx")
    assert sorted(scan(tree)) == ["a.docx", "sub/b.docx"]


def test_paths_symlinked_folder_on_the_way_refused(tree: Path) -> None:
    os.symlink(tree.parent / "outside", tree / "linked")
    assert _refused(tree, "linked/secret.docx")
    assert not any(rel.startswith("linked") for rel in scan(tree))


def test_paths_symlink_loop_refused(tree: Path) -> None:
    os.symlink(tree / "loop-b.docx", tree / "loop-a.docx")
    os.symlink(tree / "loop-a.docx", tree / "loop-b.docx")
    os.symlink(".", tree / "again")
    assert _refused(tree, "loop-a.docx")
    assert sorted(scan(tree)) == ["a.docx", "sub/b.docx"]


def test_paths_root_that_is_a_symlink_is_resolved_once(tree: Path) -> None:
    link = tree.parent / "root-link"
    os.symlink(tree, link)
    assert Settings(root=link).root == tree.resolve()
    assert sorted(scan(link)) == ["a.docx", "sub/b.docx"]
    with open_confined(link, "a.docx") as f:
        assert f.read() == b"inside-a"


def test_paths_file_swapped_for_symlink_after_check_refused(tree: Path) -> None:
    assert "a.docx" in scan(tree)  # the check
    os.symlink(tree.parent / "outside" / "secret.docx", tree / "swap.tmp")
    os.replace(tree / "swap.tmp", tree / "a.docx")  # the swap, atomically
    assert _refused(tree, "a.docx")  # the use


def test_paths_swap_during_open_refused(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The race inside open_confined itself: the last component becomes a symlink after its
    folder was opened; O_NOFOLLOW on that very open refuses it."""
    real_open = os.open

    def racing_open(path: str | Path, flags: int, *args: object, **kwargs: object) -> int:
        if path == "b.docx":
            os.symlink(tree.parent / "outside" / "secret.docx", tree / "sub" / "swap.tmp")
            os.replace(tree / "sub" / "swap.tmp", tree / "sub" / "b.docx")
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(paths.os, "open", racing_open)
    assert _refused(tree, "sub/b.docx")


def test_paths_folder_swapped_during_open_refused(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_open = os.open

    def racing_open(path: str | Path, flags: int, *args: object, **kwargs: object) -> int:
        if path == "sub":
            (tree / "sub").rename(tree.parent / "moved")
            os.symlink(tree.parent / "outside", tree / "sub")
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(paths.os, "open", racing_open)
    assert _refused(tree, "sub/secret.docx")


def test_paths_descriptor_checked_is_descriptor_read(tree: Path) -> None:
    """Once open, replacing the path changes nothing: what is parsed is what was checked."""
    with open_confined(tree, "a.docx") as f:
        os.symlink(tree.parent / "outside" / "secret.docx", tree / "swap.tmp")
        os.replace(tree / "swap.tmp", tree / "a.docx")
        assert f.read() == b"inside-a"


def test_paths_non_regular_file_refused(tree: Path) -> None:
    os.mkfifo(tree / "pipe.docx")
    assert _refused(tree, "pipe.docx")
    assert "pipe.docx" not in scan(tree)


@pytest.mark.parametrize("rel", ["a\0.docx", "sub\0/b.docx", "a.docx\0.pdf"], ids=str)
def test_paths_null_bytes_refused(tree: Path, rel: str) -> None:
    with pytest.raises((NotConfined, ValueError)):
        open_confined(tree, rel)
    result = run_job(Job(str(tree), rel, "probe"))
    assert result["error"]["kind"] == "unsupported"  # type: ignore[index]


@pytest.mark.parametrize(
    "rel", ["hop.docx", "../outside/secret.docx", "linked/secret.docx"], ids=str
)
def test_paths_jobs_never_read_outside(tree: Path, rel: str) -> None:
    os.symlink(tree.parent / "outside" / "secret.docx", tree / "hop.docx")
    os.symlink(tree.parent / "outside", tree / "linked")
    result = run_job(Job(str(tree), rel, "extract"))
    assert result["error"]["kind"] == "unsupported"  # type: ignore[index]
    assert "SECRET" not in str(result)


def test_paths_scan_stats_each_regular_file_and_nothing_else(tree: Path) -> None:
    os.symlink(tree.parent / "outside", tree / "linked")
    os.symlink(tree / "a.docx", tree / "alias.docx")
    os.mkfifo(tree / "pipe.docx")
    (tree / "sub" / "deeper").mkdir()
    (tree / "sub" / "deeper" / "c.pdf").write_bytes(b"%PDF-c")
    (tree / "~$lock.docx").write_bytes(b"lock")
    (tree / ".e.docx").write_bytes(b"dotfile")
    (tree / "sub" / ".hidden").mkdir()
    (tree / "sub" / ".hidden" / "d.docx").write_bytes(b"in a dot folder")
    (tree / "sub" / "~WRL0001.docx").write_bytes(b"word's temp")
    found = paths.scan(tree)
    assert sorted(found) == ["a.docx", "sub/b.docx", "sub/deeper/c.pdf"]
    regular = [p for p in tree.rglob("*") if p.is_file() and not p.is_symlink()]
    for path in regular:  # the scan's own checks say what `is_candidate` says
        rel = path.relative_to(tree).as_posix()
        assert (rel in found) == paths.is_candidate(rel), rel
    for rel, st in found.items():
        real = (tree / rel).lstat()
        assert st == paths.FileStat(real.st_size, real.st_mtime_ns, real.st_ctime_ns, real.st_ino)
    assert list(found) == ["a.docx", "sub/b.docx", "sub/deeper/c.pdf"]  # doc_ref order


@pytest.mark.parametrize(
    ("size", "offset"),
    [
        (1000, 500),  # a small file is digested whole
        (5 * paths.FINGERPRINT_BLOCK, 3 * paths.FINGERPRINT_BLOCK + 7),
        (50 * paths.FINGERPRINT_BLOCK, 0),  # a large one by sampled blocks: the first,
        (50 * paths.FINGERPRINT_BLOCK, 50 * paths.FINGERPRINT_BLOCK - 1),  # the last
    ],
    ids=["small", "largest-whole", "large-head", "large-tail"],
)
def test_paths_content_fingerprint_moves_with_a_same_size_rewrite(
    tree: Path, size: int, offset: int
) -> None:
    data = bytearray(os.urandom(size))
    (tree / "a.docx").write_bytes(data)
    before = paths.content_fingerprint(tree, "a.docx")
    data[offset] ^= 0xFF
    (tree / "a.docx").write_bytes(data)
    assert paths.content_fingerprint(tree, "a.docx") not in ("", before)


def test_paths_content_fingerprint_reads_only_inside_the_root(tree: Path) -> None:
    os.symlink(tree.parent / "outside" / "secret.docx", tree / "alias.docx")
    assert paths.content_fingerprint(tree, "alias.docx") == ""
    assert paths.content_fingerprint(tree, "gone.docx") == ""
