"""`InlineJobs` (`dpe-server read`: the job runs in the caller's process) hands the trees over as
the extractor built them, with no JSON in between, and they are the trees a worker's JSON
decodes to."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpe_server.isolation import jobs
from dpe_server.isolation.client import InlineJobs, run_inline
from dpe_server.model.tree import Document, Page, Properties

WEB = "web-browser-saved.html"
PDF = "pdf_structure.pdf"


def _no_decoding(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(data: object) -> object:
        raise AssertionError("a tree built in this process was decoded from JSON")

    for tree in (Document, Page, Properties):
        monkeypatch.setattr(tree, "from_json", refused)


def test_inline_jobs_decode_no_json(fixture_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _no_decoding(monkeypatch)
    inline = InlineJobs()
    doc = run_inline(inline.extract(fixture_dir, WEB))
    assert doc.pages[0].elements
    props = run_inline(inline.probe(fixture_dir, PDF))
    assert props.page_count > 1
    pages = run_inline(inline.extract_pages(fixture_dir, PDF, [1]))
    assert [p.page_index for p in pages] == [1]


@pytest.mark.parametrize(("rel", "op"), [(WEB, "extract"), (PDF, "probe"), (PDF, "pages")])
def test_inline_trees_equal_what_a_worker_sends(fixture_dir: Path, rel: str, op: jobs.Op) -> None:
    job = jobs.Job(str(fixture_dir), rel, op, pages=(0, 1) if op == "pages" else ())
    sent = jobs.unwrap(jobs.run_job(job))
    here = jobs.unwrap(jobs.run_job_here(job))
    assert jobs.as_json(here) == sent
    decode = {"extract": jobs.decode_document, "probe": jobs.decode_probe}.get(op)
    assert (decode or jobs.decode_pages)(here) == (decode or jobs.decode_pages)(sent)
