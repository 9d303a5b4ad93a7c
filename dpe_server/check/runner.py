"""Connect to a DPE server in each protocol era and walk it: capabilities, templates,
resources/list, Level 0, every document (bounded), the invalid URIs, completion, and what
can be seen of subscriptions without changing anything.

The checker touches nothing: it never writes a file or calls a tool, so it cannot see a
notification being delivered; it says so in the report.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Sequence
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPDeprecationWarning

from dpe_server.check import rules, spec
from dpe_server.check import rules_surface as surface
from dpe_server.check.invalid import invalid_cases, not_found_uris
from dpe_server.check.report import RULES, Report, problem_if
from dpe_server.check.session import Aborted, Session
from dpe_server.check.target import ERAS, Era, Target
from dpe_server.check.walk import DocumentWalk, Limits, Walked

RULES["connect"] = "the server accepts a connection in this protocol era"
RULES["sub.subscribe"] = "handshake era: resources/subscribe and unsubscribe are accepted"
RULES["sub.listen"] = "2026-07-28 era: subscriptions/listen is acknowledged for the URIs asked"
MAX_LIST_PAGES = 1000
SETTLE_SECONDS = 60
SETTLE_STEP = 1.0


async def run_check(
    target: Target, eras: Sequence[Era] = ERAS, limits: Limits | None = None
) -> Report:
    """Check `target` in each era; the report holds every outcome."""
    report = Report(target=target.label)
    reached = 0
    for era in eras:
        report.era = era
        try:
            async with target.connect(era) as client:
                reached += 1
                session = Session(client, report)
                await EraWalk(session, limits or Limits()).run()
        except Aborted as exc:
            report.note(f"walk stopped: {exc}")
        except Exception as exc:  # an unreachable or dying server is a finding, not a crash
            report.fail(
                "connect", target.label, "a working MCP connection", f"{type(exc).__name__}: {exc}"
            )
    report.era = ""
    report.unreachable = reached == 0
    return report


class EraWalk:
    def __init__(self, session: Session, limits: Limits) -> None:
        self.s = session
        self.limits = limits
        self.report = session.report
        self.host = ""

    async def run(self) -> None:
        client, r = self.s.client, self.report
        info = client.server_info
        who = f"{info.name} {info.version}" if info else "an anonymous server"
        r.note(f"protocol {client.protocol_version} with {who}")
        caps = client.server_capabilities
        r.check(surface.caps_resources, "capabilities", caps)
        r.check(surface.caps_completions, "capabilities", caps)
        listed = await self._list()
        templates = await self._templates()
        self.host = self._host(listed, templates)
        if not self.host:
            r.fail("templates", "resources/templates/list", "a dpe:// host to walk", "none found")
            return
        r.check(surface.templates, "resources/templates/list", templates, self.host)
        await self._settle()
        listed = await self._list()  # again: the listing may have been refined meanwhile
        docs = await self._level0(listed)
        walked: list[Walked] = []
        chosen = _spread(docs, self.limits.max_docs)
        if len(docs) > len(chosen):
            r.skip(
                "L1.*",
                f"{len(docs) - len(chosen)} documents not walked "
                f"(--max-docs {self.limits.max_docs})",
            )
        for doc in chosen:
            got = await DocumentWalk(self.s, self.host, self.limits).run(doc)
            if got is not None:
                walked.append(got)
        await self._errors(walked)
        await self._tolerance(walked)
        await self._completion(docs, walked)
        await self._subscriptions(docs)

    async def _settle(self) -> None:
        """Wait until two Level 0 reads a second apart agree and none of its documents is
        still `indexing` (a server may still be refining titles and page counts as it
        extracts, and listing the documents inside those it extracts)."""
        uri, waited = f"dpe://{self.host}", 0
        last = (await self.s.read(uri)).text
        while waited < SETTLE_SECONDS:
            await anyio.sleep(SETTLE_STEP)
            now = (await self.s.read(uri)).text
            if now == last and '"indexing": true' not in now:
                break
            last, waited = now, waited + 1
        else:
            self.report.note(f"the catalog was still changing after {SETTLE_SECONDS} s")
        if waited:
            self.report.note(f"the catalog settled after about {waited + 1} s")

    async def _list(self) -> list[types.Resource]:
        out: list[types.Resource] = []
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(MAX_LIST_PAGES):
            try:
                page = await self.s.client.list_resources(cursor=cursor)
            except Exception as exc:  # a broken answer is a finding, not a crash
                self.s.protocol_failure("resources/list", exc)
                return out
            out += page.resources
            cursor = page.next_cursor
            if not cursor or cursor in seen:
                break
            seen.add(cursor)
        return out

    async def _templates(self) -> list[str]:
        try:
            result = await self.s.client.list_resource_templates()
        except Exception as exc:  # a broken answer is a finding, not a crash
            self.s.protocol_failure("resources/templates/list", exc)
            return []
        return [t.uri_template for t in result.resource_templates]

    @staticmethod
    def _host(listed: Sequence[types.Resource], templates: Sequence[str]) -> str:
        for uri in [*(r.uri for r in listed), *templates]:
            if uri.startswith("dpe://"):
                return uri.removeprefix("dpe://").split("/", 1)[0]
        return ""

    async def _level0(self, listed: Sequence[types.Resource]) -> list[dict[str, Any]]:
        r, uri = self.report, f"dpe://{self.host}"
        payload = await self.s.json(uri)
        if not isinstance(payload, dict) or not r.check(rules.l0_fields, uri, payload):
            return []
        docs = [d for d in payload["documents"] if isinstance(d, dict)]
        r.check(rules.l0_unique, uri, docs)
        if payload.get("total_count") == len(docs):  # the whole listing: every parent is in it
            r.check(rules.l0_parent, uri, docs)
        for doc in docs:
            for check in rules.DOCUMENT_RULES:
                r.check(check, f"{uri} ({doc.get('doc_ref')})", doc)
            r.check(rules.doc_uri, f"{uri} ({doc.get('doc_ref')})", doc, self.host)
        for res in listed:
            r.check(surface.list_fields, res.uri, res)
        await self._list_vs_level0(listed, docs)
        await self.s.formats(uri)
        if len(docs) >= 2:
            sliced_uri = f"{uri}?offset=1&limit=1"
            sliced = await self.s.json(sliced_uri)
            if sliced is not None:
                r.check(rules.l0_offset_limit, sliced_uri, docs, sliced, 1, 1, len(docs))
        return docs

    async def _list_vs_level0(
        self, listed: Sequence[types.Resource], docs: Sequence[dict[str, Any]]
    ) -> None:
        """resources/list against Level 0; on a difference, both are read again once after a
        pause (a big document may still be refining its title), and that is what counts."""
        for attempt in range(2):
            by_uri = {str(d.get("uri")): d for d in docs}
            found = [(res.uri, surface.list_matches_l0(res, by_uri.get(res.uri))) for res in listed]
            found.append(
                ("resources/list", surface.list_complete([x.uri for x in listed], list(by_uri)))
            )
            if attempt == 1 or not any(problems for _, problems in found):
                break
            await anyio.sleep(SETTLE_STEP * 3)
            listed = await self._list()
            level0 = await self.s.json(f"dpe://{self.host}")
            if not isinstance(level0, dict) or not isinstance(level0.get("documents"), list):
                break
            docs = [d for d in level0["documents"] if isinstance(d, dict)]
        for uri, problems in found:
            rule_id = (
                surface.list_complete.id
                if uri == "resources/list"
                else (surface.list_matches_l0.id)
            )
            self.report.record(rule_id, uri, problems)

    async def _errors(self, walked: Sequence[Walked]) -> None:
        r = self.report
        sample = next((w for w in walked if w.first_page_uri), None)
        if sample is None or sample.first_page_uri is None:
            r.skip("err.4204.*", "no document with a readable page to make invalid URIs from")
            return
        for case in invalid_cases(sample.doc_uri, sample.first_page_uri, sample.first_element_uri):
            got = await self.s.read(case.uri)
            r.record(
                case.rule,
                case.uri,
                surface.expect_error(got.error, spec.INVALID_PARAMS, spec.DPE_INVALID_URI),
            )
        for case in not_found_uris(self.host, sample.doc_uri):
            got = await self.s.read(case.uri)
            r.record(
                case.rule,
                case.uri,
                surface.expect_error(got.error, self.s.not_found_code, spec.DPE_UNKNOWN_DOC),
            )

    async def _tolerance(self, walked: Sequence[Walked]) -> None:
        sample = next((w for w in walked if w.first_element_uri), None)
        if sample is None or sample.first_page_uri is None or sample.first_element_uri is None:
            return
        pairs = [
            (sample.doc_uri, sample.doc_uri + "/"),
            (sample.doc_uri, sample.doc_uri + "?unknown-parameter=1"),
            (sample.first_page_uri, sample.first_page_uri + "?depth=pages&limit=1"),
            (sample.first_element_uri, sample.first_element_uri + "?categories=nothing"),
        ]
        for plain, variant in pairs:
            a, b = await self.s.json(plain), await self.s.json(variant)
            if a is not None and b is not None:
                self.report.check(surface.read_query_tolerance, variant, _no_uri(a), _no_uri(b))

    async def _completion(self, docs: Sequence[dict[str, Any]], walked: Sequence[Walked]) -> None:
        r, s = self.report, self.s
        pages_t = f"dpe://{self.host}/{{doc_ref}}/pages/{{page_index}}"
        elements_t = f"dpe://{self.host}/{{doc_ref}}/elements/{{element_id}}"
        refs = [str(d.get("doc_ref")) for d in docs]
        got = await s.complete(pages_t, "doc_ref", "")
        self._completed("complete doc_ref ''", got, refs, exact=True)
        if refs:
            target = refs[len(refs) // 2]
            got = await s.complete(pages_t, "doc_ref", target[:3])
            self._completed(f"complete doc_ref {target[:3]!r}", got, refs, must=target)
        sample = next((w for w in walked if w.page_ids), None)
        if sample is not None:
            ctx = {"doc_ref": sample.doc_ref}
            pages = [str(i) for i in range(sample.page_count)]
            got = await s.complete(pages_t, "page_index", "", ctx)
            self._completed(f"complete page_index of {sample.doc_ref}", got, pages, exact=True)
            first = min(sample.page_ids)
            got = await s.complete(elements_t, "element_id", "", {**ctx, "page_index": str(first)})
            what = f"complete element_id of {sample.doc_ref} page {first}"
            self._completed(what, got, sample.page_ids[first], exact=True)
        for template, name in ((pages_t, "page_index"), (elements_t, "element_id")):
            c, err = await s.complete(template, name, "")
            r.check(surface.complete_no_context, f"complete {name} without doc_ref", c, err)
        c, err = await s.complete(pages_t, "no_such_argument", "")
        r.check(surface.complete_no_context, "complete an unknown argument", c, err)

    def _completed(
        self,
        what: str,
        got: tuple[types.Completion | None, str | None],
        real: Sequence[str],
        *,
        must: str | None = None,
        exact: bool = False,
    ) -> None:
        c, err = got
        if c is None:
            self.report.fail("complete.values", what, "a completion result", f"error {err}")
            return
        self.report.check(surface.complete_bounds, what, c)
        self.report.check(surface.complete_values, what, c.values, real, must, exact)

    async def _subscriptions(self, docs: Sequence[dict[str, Any]]) -> None:
        r, client = self.report, self.s.client
        uris = [f"dpe://{self.host}", *(str(d.get("uri")) for d in docs[:1])]
        why = "it needs a document to change, and the checker touches nothing"
        if self.s.modern:
            try:
                async with client.listen(
                    resources_list_changed=True, resource_subscriptions=uris
                ) as sub:
                    honored = sub.honored
            except Exception as exc:  # a refused listen is a finding, not a crash
                r.fail(
                    "sub.listen",
                    "subscriptions/listen",
                    "an acknowledged listen",
                    f"{type(exc).__name__}: {exc}",
                )
            else:
                got = sorted(honored.resource_subscriptions or [])
                r.record(
                    "sub.listen",
                    "subscriptions/listen",
                    problem_if(
                        got != sorted(uris) or honored.resources_list_changed is not True,
                        f"resourceSubscriptions {sorted(uris)} and resourcesListChanged honored",
                        honored.model_dump(by_alias=True, exclude_none=True),
                    ),
                )
            r.skip(
                "notify.updated",
                f"delivery of notifications/resources/updated on a listen stream: {why}",
            )
            r.skip(
                "notify.list_changed",
                f"delivery of notifications/resources/list_changed on a listen stream: {why}",
            )
            return
        try:
            with warnings.catch_warnings():  # the handshake era is the one being checked here
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                for uri in uris:
                    await client.session.subscribe_resource(uri)
                for uri in uris:
                    await client.session.unsubscribe_resource(uri)
        except Exception as exc:  # a refused subscribe is a finding, not a crash
            r.fail(
                "sub.subscribe",
                uris[-1],
                "subscribe and unsubscribe accepted",
                f"{type(exc).__name__}: {exc}",
            )
        else:
            r.record("sub.subscribe", ", ".join(uris), [])
        r.skip("notify.updated", f"delivery of notifications/resources/updated: {why}")
        r.skip("notify.list_changed", f"delivery of notifications/resources/list_changed: {why}")


def _no_uri(payload: Any) -> Any:
    """A payload without its top-level `uri` (a variant URI may be echoed differently)."""
    if isinstance(payload, dict):
        return {k: v for k, v in payload.items() if k != "uri"}
    return payload


def _spread(docs: Sequence[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    """At most `n` documents, taking file types in turn so a bounded walk sees every type."""
    by_type: dict[str, list[dict[str, Any]]] = {}
    for d in docs:
        by_type.setdefault(str(d.get("file_type")), []).append(d)
    mixed = [d for group in itertools.zip_longest(*by_type.values()) for d in group if d]
    return mixed[:n]
