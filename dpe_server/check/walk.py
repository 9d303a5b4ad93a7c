"""Walking one document: Level 1 (both depths, slicing), its pages at Level 2 (categories
filter, formats), its elements at Level 3, and the not-found cases around them."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import anyio

from dpe_server.check import fidelity, mailtext, officetext, rules, rules_page, spec, webtext
from dpe_server.check import rules_surface as surface
from dpe_server.check.report import Report
from dpe_server.check.session import Session

MAIL_TYPES = ("eml", "msg", "mbox")
"""The e-mail file types whose messages `L2.words` checks (`mailtext`)."""


@dataclass(frozen=True)
class Limits:
    """How much of a big server the walk reads."""

    max_docs: int = 40
    max_pages: int = 25
    """Pages read per document (Level 2)."""
    max_elements: int = 150
    """Elements read per document (Level 3)."""
    words: bool = False
    """Check each pdf page's words against pdftotext's reading of the served file, each
    e-mail message's against `mailtext`'s, and the words of all the pages of a web page,
    Markdown text, EPUB or text file against `webtext`'s reading of the whole file, of an
    office file against `officetext`'s (`L2.words`; the files must be readable where the
    checker runs)."""


@dataclass
class Walked:
    """What a document walk found that later checks (errors, completion) reuse."""

    doc_uri: str
    doc_ref: str
    page_count: int
    page_ids: dict[int, list[str]] = field(default_factory=dict)
    words: list[str] | None = None
    """The text of each page as pdftotext (an e-mail file: `mailtext`) reads the document's
    file, where it can be read here (`L2.words`); None otherwise."""
    whole: str | None = None
    """The text of the whole file as `webtext` reads it (a web page, Markdown text, EPUB or
    text file; `officetext` an office file), where it can be read here (`L2.words`); None
    otherwise."""
    served: list[str] = field(default_factory=list)
    """The served text of each page read, for `whole`."""
    first_page_uri: str | None = None
    first_element_uri: str | None = None


class DocumentWalk:
    def __init__(self, session: Session, host: str, limits: Limits) -> None:
        self.s = session
        self.host = host
        self.limits = limits

    @property
    def report(self) -> Report:
        return self.s.report

    async def run(self, entry: dict[str, Any]) -> Walked | None:
        uri, ref = str(entry.get("uri")), str(entry.get("doc_ref"))
        level1 = await self.s.json(uri)
        if not isinstance(level1, dict):
            return None
        r = self.report
        for check in rules.DOCUMENT_RULES:
            r.check(check, uri, level1)
        r.check(rules.doc_uri, uri, level1, self.host)
        await self._matches_level0(uri, level1, entry)
        await self.s.formats(uri)
        count = level1.get("page_count")
        if not isinstance(count, int):
            return None
        walked = Walked(uri, ref, count)
        walked.words = await self._reference_words(uri, entry)
        walked.whole = await self._reference_text(uri, entry)
        index = await self._page_index(uri, count)
        await self._out_of_range(uri, count)
        ids: list[str] = []
        budget = self.limits.max_elements
        for i in range(min(count, self.limits.max_pages)):
            page = await self._page(walked, i, index.get(i))
            if page is None:
                continue
            elements = [e for e in page.get("elements") or [] if isinstance(e, dict)]
            walked.page_ids[i] = [str(e.get("element_id")) for e in elements]
            ids += walked.page_ids[i]
            budget = await self._elements(walked, i, elements, budget)
        if walked.whole is not None and count > self.limits.max_pages:
            r.skip(
                "L2.words",
                f"{uri}: the served words not compared with the file's, whose pages "
                f"{self.limits.max_pages}..{count - 1} are not read (--max-pages "
                f"{self.limits.max_pages})",
            )
        elif walked.whole is not None:
            r.check(rules_page.l2_words, uri, walked.whole, "\n\n".join(walked.served), True)
        if count > self.limits.max_pages:
            r.skip(
                "L2.*",
                f"{uri}: pages {self.limits.max_pages}..{count - 1} not read "
                f"(--max-pages {self.limits.max_pages})",
            )
        if budget <= 0:
            r.skip(
                "L3.*",
                f"{uri}: elements beyond {self.limits.max_elements} not read "
                f"(--max-elements {self.limits.max_elements})",
            )
        r.check(rules_page.l2_unique_ids, uri, ids)
        await self._unknown_element(uri)
        return walked

    async def _matches_level0(self, uri: str, level1: Any, entry: dict[str, Any]) -> None:
        """Level 1 against the Level 0 entry; on a difference Level 0 is read again (the
        document may have moved from its cheap probe to its full extraction or its error)."""
        if rules.l1_matches_l0(level1, entry):
            level0 = await self.s.json(f"dpe://{self.host}")
            docs = level0.get("documents") if isinstance(level0, dict) else None
            fresh = [d for d in docs or [] if isinstance(d, dict) and d.get("uri") == uri]
            entry = fresh[0] if fresh else entry
        self.report.check(rules.l1_matches_l0, uri, level1, entry)

    async def _page_index(self, uri: str, count: int) -> dict[int, dict[str, Any]]:
        """depth=pages, 100 at a time up to the pages the walk reads; default and sliced."""
        r = self.report
        found: dict[int, dict[str, Any]] = {}
        offset = 0
        while True:
            page_uri = f"{uri}?depth=pages&offset={offset}&limit={spec.MAX_LIMIT}"
            payload = await self.s.json(page_uri)
            if not isinstance(payload, dict):
                return found
            r.check(rules.l1_pages_fields, page_uri, payload)
            r.check(rules.l1_page_total, page_uri, payload)
            r.check(rules.l1_page_slice, page_uri, payload, self.host, offset, spec.MAX_LIMIT)
            for p in payload.get("pages") or []:
                if isinstance(p, dict) and isinstance(p.get("page_index"), int):
                    found[p["page_index"]] = p
            offset += spec.MAX_LIMIT
            if offset >= min(count, self.limits.max_pages):
                break
        default_uri = f"{uri}?depth=pages"
        payload = await self.s.json(default_uri)
        if isinstance(payload, dict):
            r.check(rules.l1_page_slice, default_uri, payload, self.host, 0, spec.DEFAULT_LIMIT)
            await self.s.formats(default_uri)
        if count >= 2:
            sliced_uri = f"{uri}?depth=pages&offset=1&limit=1"
            payload = await self.s.json(sliced_uri)
            if isinstance(payload, dict):
                r.check(rules.l1_page_slice, sliced_uri, payload, self.host, 1, 1)
        return found

    async def _out_of_range(self, uri: str, count: int) -> None:
        page_uri = f"{uri}/pages/{count}"
        got = await self.s.read(page_uri)
        problems = surface.expect_error(
            got.error, self.s.not_found_code, spec.DPE_PAGE_RANGE, page_count=count
        )
        self.report.record("err.4202.page", page_uri, problems)

    async def _unknown_element(self, uri: str) -> None:
        el_uri = f"{uri}/elements/p0-txt99999"
        got = await self.s.read(el_uri)
        problems = surface.expect_error(got.error, self.s.not_found_code, spec.DPE_UNKNOWN_ELEMENT)
        self.report.record("err.4203.element", el_uri, problems)

    async def _page(
        self, walked: Walked, i: int, entry: dict[str, Any] | None
    ) -> dict[str, Any] | None:
        r = self.report
        page_uri = f"{walked.doc_uri}/pages/{i}"
        page = await self.s.json(page_uri)
        if not isinstance(page, dict):
            return None
        walked.first_page_uri = walked.first_page_uri or page_uri
        if not r.check(rules_page.l2_fields, page_uri, page, self.host, walked.doc_ref, i):
            return None
        elements = [e for e in page["elements"] if isinstance(e, dict)]
        r.check(rules_page.l2_element_count, page_uri, page)
        r.check(rules_page.l2_category, page_uri, elements)
        r.check(rules_page.l2_element_id, page_uri, elements, i)
        r.check(rules_page.l2_element_numbering, page_uri, elements)
        r.check(rules_page.l2_summary, page_uri, elements)
        r.check(rules_page.l2_table_preview, page_uri, elements)
        r.check(rules_page.content_shape, page_uri, elements)
        r.check(rules_page.content_form, page_uri, elements)
        if entry is not None:
            r.check(rules.l1_element_count, page_uri, entry, page)
            r.check(rules.l1_page_title, page_uri, entry, page)
        bodies = await self.s.formats(page_uri)
        if "markdown" in bodies:
            r.check(
                surface.read_markdown_heading,
                page_uri + "?format=markdown",
                bodies["markdown"],
                page,
            )
            r.check(
                rules_page.l2_markdown_recall,
                page_uri + "?format=markdown",
                elements,
                bodies["markdown"],
            )
            if walked.words is not None or walked.whole is not None:
                await self._words(page_uri, elements, bodies["markdown"], walked, i)
        await self._filters(page_uri, page, elements)
        return page

    def _readable(self, entry: dict[str, Any]) -> Path | None:
        """The served file of `entry` where this checker can read it (its `file_uri`); None,
        with a skip said once when it cannot, otherwise. A document inside another has no
        file of its own (its `file_uri` names its container): None, no skip."""
        parsed = urlparse(str(entry.get("file_uri") or ""))
        if parsed.fragment:
            return None
        path = Path(unquote(parsed.path))
        if parsed.scheme != "file" or not path.is_file():
            self.report.skip("L2.words", "the served files are not readable here")
            return None
        return path

    async def _reference_words(self, uri: str, entry: dict[str, Any]) -> list[str] | None:
        """pdftotext's text of each page of a pdf (`mailtext`'s of each message of an e-mail
        file) the server serves from a file this checker can read (its `file_uri`), for
        `L2.words`; None, with a skip said once, otherwise."""
        kind = entry.get("file_type")
        if not self.limits.words or kind not in ("pdf", *MAIL_TYPES):
            return None
        path = self._readable(entry)
        if path is None:
            return None
        if kind in MAIL_TYPES:
            try:
                return await anyio.to_thread.run_sync(mailtext.pages, path)
            except Exception as exc:  # a file the reference reader cannot read: not checked
                self.report.skip("L2.words", f"{uri}: the e-mail reader cannot read it ({exc})")
                return None
        if not fidelity.pdftotext_available():
            self.report.skip("L2.words", "poppler's pdftotext is not installed")
            return None
        try:
            return await anyio.to_thread.run_sync(fidelity.pdftotext_pages, path)
        except (OSError, subprocess.SubprocessError) as exc:
            self.report.skip("L2.words", f"{uri}: pdftotext cannot read the file ({exc})")
            return None

    async def _reference_text(self, uri: str, entry: dict[str, Any]) -> str | None:
        """`webtext`'s text of a whole web page, Markdown text, EPUB or text file (`officetext`'s
        of an office file) the server serves from a file this checker can read, for `L2.words`;
        None otherwise."""
        kind = entry.get("file_type")
        if not self.limits.words or kind not in (*webtext.TYPES, *officetext.TYPES):
            return None
        if entry.get("error"):  # served as an error (an e-book under DRM): no words to hold
            return None
        path = self._readable(entry)
        if path is None:
            return None
        try:
            reader = webtext if kind in webtext.TYPES else officetext
            return await anyio.to_thread.run_sync(reader.document_text, path)
        except Exception as exc:  # a file the reference reader cannot read: not checked
            self.report.skip("L2.words", f"{uri}: the reader cannot read it ({exc})")
            return None

    async def _words(
        self, page_uri: str, elements: Sequence[Any], markdown: str, walked: Walked, i: int
    ) -> None:
        """`L2.words` on page `i`: its Markdown, with every table whose preview was cut read
        whole at Level 3, against pdftotext's text of the page (`mailtext`'s of the message);
        of a whole document's (`walked.whole`), kept to be compared once all pages are read."""
        served = [markdown]
        for e in elements:
            content = e.get("content")
            if isinstance(content, dict) and content.get("rows_truncated"):
                element_uri = f"{page_uri.rsplit('/pages/', 1)[0]}/elements/{e.get('element_id')}"
                bodies = await self.s.formats(element_uri)
                served.append(bodies.get("markdown", ""))
        if walked.words is None:
            walked.served.append("\n\n".join(served))
            return
        reference = walked.words[i] if i < len(walked.words) else ""
        self.report.check(
            rules_page.l2_words, page_uri + "?format=markdown", reference, "\n\n".join(served)
        )

    async def _filters(self, page_uri: str, page: dict[str, Any], elements: Sequence[Any]) -> None:
        present = list(dict.fromkeys(str(e.get("category")) for e in elements))
        absent = next((c for c in spec.CATEGORIES if c not in present), None)
        choices = [present[:1], present[:2]] if len(present) >= 2 else [present[:1]]
        if absent:
            choices.append([absent])
        for wanted in choices:
            if not wanted:
                continue
            uri = f"{page_uri}?categories={','.join(wanted)}"
            filtered = await self.s.json(uri)
            if isinstance(filtered, dict):
                self.report.check(rules_page.l2_categories_filter, uri, page, filtered, wanted)

    async def _elements(
        self, walked: Walked, i: int, elements: Sequence[dict[str, Any]], budget: int
    ) -> int:
        rendered: set[str] = set()
        for e in elements:
            if budget <= 0:
                break
            budget -= 1
            eid, cat = str(e.get("element_id")), str(e.get("category"))
            uri = f"{walked.doc_uri}/elements/{eid}"
            walked.first_element_uri = walked.first_element_uri or uri
            await self._element(walked, uri, eid, i, e)
            if cat not in rendered:  # each category's rendering once per page
                rendered.add(cat)
                await self.s.formats(uri)
        return budget

    async def _element(
        self, walked: Walked, uri: str, eid: str, i: int, entry: dict[str, Any]
    ) -> None:
        r = self.report
        got = await self.s.read_ok(uri)
        if got is None or not r.check(surface.read_json, uri, got.contents, uri):
            return
        payload = json.loads(got.text)
        if not r.check(rules_page.l3_fields, uri, payload, self.host, walked.doc_ref, eid):
            return
        r.check(rules_page.l3_resolves, uri, payload, entry, i)
        r.check(rules_page.content_shape, uri, [payload])
        r.check(rules_page.content_form, uri, [payload])
        cut = "cut" in payload  # served cut to a size cap (an extension field)
        if cut:
            r.check(rules_page.l3_cut, uri, payload, len(got.text.encode()))
        r.check(
            rules_page.l3_content_matches,
            uri,
            payload["content"],
            entry.get("content"),
            str(entry.get("category")),
            cut,
        )
        if payload["category"] == "table":
            r.check(rules_page.l3_table_rows, uri, payload["content"], cut)
        if len(got.contents) > 1:
            r.check(surface.read_image_blob, uri, got.contents)
