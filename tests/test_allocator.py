"""The serving process's C allocator setting (`cli.allocator`)."""

from __future__ import annotations

import platform
import sys

import pytest

from dpe_server.cli.allocator import big_blocks_returned

GLIBC = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"


@pytest.mark.skipif(not GLIBC, reason="mallopt's threshold is glibc's")
def test_glibc_takes_the_fixed_threshold() -> None:
    assert big_blocks_returned() is True
    assert big_blocks_returned() is True  # again at a second start in one process: harmless


@pytest.mark.skipif(GLIBC, reason="on glibc the threshold is set")
def test_elsewhere_nothing_is_done() -> None:
    assert big_blocks_returned() is False
