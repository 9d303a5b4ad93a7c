"""The code fingerprint's memo (`registry.extractor_fingerprint`'s `memo`): `dpe-server read`
reads it back instead of hashing the code again, and never while a module changed (issue 34)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from dpe_server.extractors import registry
from dpe_server.extractors.registry import extractor_fingerprint

PACKAGE = Path(registry.__file__).resolve().parents[1]


@pytest.fixture
def code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the subpackages that make trees, trusted to their stat at once (the copy was
    just written: `RACY_SECONDS` would keep every memo out)."""
    monkeypatch.setattr(registry, "RACY_SECONDS", 0.0)
    copy = tmp_path / "dpe_server"
    for part in ("extractors", "model", "isolation"):
        shutil.copytree(PACKAGE / part, copy / part, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def test_code_fingerprint_memo_is_read_back_while_the_code_is_unchanged(
    code: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memo = tmp_path / "cache" / "code-fingerprint.json"
    memo.parent.mkdir()
    fingerprint = extractor_fingerprint(code, memo)
    assert fingerprint == extractor_fingerprint(code)  # the same value, memo or not
    assert memo.is_file()

    def no_module_read(*args: object, **kwargs: object) -> object:
        raise AssertionError("a module was read: the memo was not used")

    monkeypatch.setattr(registry, "open", no_module_read, raising=False)
    assert extractor_fingerprint(code, memo) == fingerprint


def test_code_fingerprint_memo_is_not_stale_after_an_edit_that_keeps_size_and_mtime(
    code: Path, tmp_path: Path
) -> None:
    """An edit of the same size whose modification time is set back (as `rsync -t` or an
    archive would) still changes the fingerprint: the memo is kept under the change time and
    inode too, which no program sets back."""
    memo = tmp_path / "code-fingerprint.json"
    before = extractor_fingerprint(code, memo)
    assert memo.is_file()
    module = code / "extractors" / "xlsx" / "cells.py"
    st = module.stat()
    text = module.read_bytes()
    module.write_bytes(text.replace(b"def ", b"def_", 1))
    os.utime(module, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert module.stat().st_size == st.st_size
    assert module.stat().st_mtime_ns == st.st_mtime_ns
    after = extractor_fingerprint(code, memo)
    assert after != before
    assert after == extractor_fingerprint(code)  # computed from the bytes


def test_code_fingerprint_memo_of_another_install_is_not_used(code: Path, tmp_path: Path) -> None:
    """A cache folder shared by two installs: each hashes its own code, whatever the memo
    says."""
    memo = tmp_path / "code-fingerprint.json"
    other = tmp_path / "other" / "dpe_server"
    shutil.copytree(code, other)
    (other / "model" / "tree.py").write_text("# another version\n")
    mine = extractor_fingerprint(code, memo)
    theirs = extractor_fingerprint(other, memo)
    assert theirs != mine
    assert extractor_fingerprint(code, memo) == mine
    assert extractor_fingerprint(other, memo) == theirs


def test_code_fingerprint_without_a_usable_memo_is_computed(code: Path, tmp_path: Path) -> None:
    """A memo that cannot be written (the folder is a file, read-only) or holds anything is no
    memo."""
    expected = extractor_fingerprint(code)
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    assert extractor_fingerprint(code, blocked / "code-fingerprint.json") == expected
    damaged = tmp_path / "code-fingerprint.json"
    damaged.write_text('{"stamp": [')
    assert extractor_fingerprint(code, damaged) == expected
    assert extractor_fingerprint(code, damaged) == expected  # (rewritten, then read back)


def test_code_fingerprint_of_code_just_written_is_not_kept(tmp_path: Path) -> None:
    """A module written less than `RACY_SECONDS` ago may be written again within one tick of
    the file system's clock, its times unchanged: no memo is kept then."""
    copy = tmp_path / "dpe_server"
    for part in ("extractors", "model", "isolation"):
        shutil.copytree(PACKAGE / part, copy / part, ignore=shutil.ignore_patterns("__pycache__"))
    memo = tmp_path / "code-fingerprint.json"
    assert extractor_fingerprint(copy, memo) == extractor_fingerprint(copy)
    assert not memo.exists()


def test_code_fingerprint_memo_is_kept_in_the_one_shot_readers_cache_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dpe_server.catalog.sqlite import CODE_MEMO
    from dpe_server.read.oneshot import OneShotReader

    monkeypatch.setattr(registry, "RACY_SECONDS", 0.0)
    (tmp_path / "docs").mkdir()
    cache = tmp_path / "cache"
    with OneShotReader(tmp_path / "docs", "h", cache_dir=cache) as reader:
        code = reader._code
    assert code == extractor_fingerprint()
    assert (cache / CODE_MEMO).is_file()
    with OneShotReader(tmp_path / "docs", "h", cache_dir=cache) as reader:
        assert reader._code == code
