"""Every word of an e-mail message's own parts is served (issue 35): its From, To, Cc and
Subject fields, its plain part, its HTML part as a browser shows it (`fidelity.browser_text`),
read by an independent reader (`check/mailtext.py`: Python's `email` package, `olefile` for a
.msg) and compared with the served pages (`fidelity.compare`: the same normalisation as the
pdf and web page checks), on the e-mail fixtures and every file of ../shared/corpus/email.

Of a `multipart/alternative`, a mail client shows one alternative, the HTML one; its plain
alternative's words are checked too, except in the files listed below with the reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpe_server.check import mailtext
from dpe_server.check.fidelity import compare, served_text
from dpe_server.extractors import DEFAULT_LIMITS, for_path
from fixtures.builders import mail

MAIL_SUFFIXES = (".eml", ".msg", ".mbox")
FIXTURES = [mail.EML, mail.MSG, mail.MBOX]
PLAIN_ALTERNATIVE_NOT_SERVED = {
    mail.EML: "its plain alternative says MAIL-PLAIN-SENTINEL where the HTML one says "
    "MAIL-HTML-SENTINEL, on purpose: the HTML alternative is the body served",
}
"""Files whose plain alternative holds words its HTML alternative (the one served) lacks."""


def _check(path: Path) -> None:
    extractor = for_path(path)
    assert extractor is not None
    with path.open("rb") as f:
        doc = extractor.extract(f, DEFAULT_LIMITS)
    reference = mailtext.pages(path)
    assert reference, path.name
    for page in doc.pages:
        expected = reference[page.page_index] if page.page_index < len(reference) else ""
        found = compare(page.page_index, expected, served_text(page))
        assert found.missing == (), f"{path.name} page {page.page_index}"
    assert len(doc.pages) >= len(reference)
    if path.name not in PLAIN_ALTERNATIVE_NOT_SERVED:
        served = "\n\n".join(served_text(page) for page in doc.pages)
        assert compare(0, mailtext.plain_parts(path), served).missing == (), path.name


@pytest.mark.parametrize("name", FIXTURES)
def test_every_word_of_a_fixture_message_is_served(fixture_dir: Path, name: str) -> None:
    _check(fixture_dir / name)


def test_the_reference_reads_what_a_mail_client_shows(fixture_dir: Path) -> None:
    (text,) = mailtext.pages(fixture_dir / mail.EML)
    assert "MAIL-HTML-SENTINEL" in text
    assert "MAIL-PLAIN-SENTINEL" not in text  # the plain alternative is not shown
    assert "Alice Example" in text
    assert "carol@example.com" in text
    assert "MAIL-PLAIN-SENTINEL" in mailtext.plain_parts(fixture_dir / mail.EML)


@pytest.mark.corpus
def test_every_word_of_a_corpus_message_is_served(corpus: Path) -> None:
    folder = corpus / "email"
    if not folder.is_dir():
        pytest.skip(f"{folder} is absent: the e-mail corpus is not on this machine")
    files = sorted(p for p in folder.iterdir() if p.suffix.lower() in MAIL_SUFFIXES)
    assert files
    for path in files:
        _check(path)
