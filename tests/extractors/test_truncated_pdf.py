"""A pdf whose end is missing says so, and never to "try again later": a file truncated for
good stays so however long one waits (a file still being written is read again when it
changes, and retried while it is fresh: `catalog.extraction.RETRY_DELAYS`)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from dpe_server.extractors import DEFAULT_LIMITS, for_suffix
from dpe_server.model.errors import CorruptError

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def test_a_truncated_pdf_is_told_its_end_is_missing_not_to_try_later() -> None:
    data = (FIXTURES / "pdf_text.pdf").read_bytes()
    extractor = for_suffix(".pdf")
    assert extractor is not None
    with pytest.raises(CorruptError) as info:
        extractor.extract(io.BytesIO(data[: len(data) // 2]), DEFAULT_LIMITS)
    assert info.value.transient  # retried while the file is fresh
    assert info.value.message == (
        "This PDF is incomplete (its end is missing); it may be truncated or still being written."
    )
