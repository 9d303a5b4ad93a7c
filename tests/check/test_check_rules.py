"""The checker's pure parts: payload rules on hand-made payloads, the invalid URIs, target
parsing and the report's text and exit code."""

from __future__ import annotations

from typing import Any

import pytest

from dpe_server.check import rules, rules_page, spec
from dpe_server.check import rules_surface as surface
from dpe_server.check.invalid import invalid_cases
from dpe_server.check.report import RULES, Report, Rule, render_text
from dpe_server.check.target import HttpTarget, StdioTarget, parse_target
from dpe_server.views.element_cap import cut_string

HOST = "local.dpe.t"
DOC: dict[str, Any] = {
    "doc_ref": "report-1a2b3c",
    "uri": f"dpe://{HOST}/report-1a2b3c",
    "file_uri": "file:///docs/report.pptx",
    "file_type": "pptx",
    "title": "Report",
    "page_count": 2,
    "keywords": ["q3"],
    "summary": "Quarterly report",
    "last_modified": "2026-01-31T09:30:00Z",
}


CUT_CELL = cut_string("abcdef", 3)


def _el(eid: str, category: str, summary: str = "A thing", **content: Any) -> dict[str, Any]:
    return {"element_id": eid, "category": category, "summary": summary, "content": content}


def _form(*changes: dict[str, Any]) -> tuple[list[dict[str, Any]]]:
    """A form element of one field, a text field named `a` with `changes` applied."""
    field = {"name": "a", "type": "text", "value": "", "label": "A", "kind": "text"}
    for change in changes:
        field |= change
    return ([_el("p0-frm1", "form", fields=[field])],)


def _doc(**changes: Any) -> dict[str, Any]:
    out = {**DOC, **changes}
    return {k: v for k, v in out.items() if v is not ...}


CASES: list[tuple[str, Rule[Any], tuple[Any, ...], bool]] = [
    ("doc-ok", rules.doc_fields, (DOC,), True),
    ("doc-no-page-count", rules.doc_fields, (_doc(page_count=...),), False),
    ("doc-page-count-str", rules.doc_fields, (_doc(page_count="2"),), False),
    ("doc-keyword-int", rules.doc_fields, (_doc(keywords=[1]),), False),
    ("time-ok", rules.doc_last_modified, (DOC,), True),
    (
        "time-offset",
        rules.doc_last_modified,
        (_doc(last_modified="2026-01-31T09:30:00+00:00"),),
        False,
    ),
    ("ref-upper", rules.doc_doc_ref, (_doc(doc_ref="Report-1"),), False),
    ("ref-underscore", rules.doc_doc_ref, (_doc(doc_ref="my_report"),), False),
    ("uri-ok", rules.doc_uri, (DOC, HOST), True),
    ("uri-other-host", rules.doc_uri, (DOC, "other"), False),
    ("file-type-mismatch", rules.doc_file_uri, (_doc(file_type="ppt"),), False),
    (
        "error-ok",
        rules.doc_error,
        (_doc(page_count=0, error={"kind": "encrypted", "message": "Needs a password."}),),
        True,
    ),
    (
        "error-pages",
        rules.doc_error,
        (_doc(error={"kind": "encrypted", "message": "Needs a password."}),),
        False,
    ),
    (
        "error-kind",
        rules.doc_error,
        (_doc(page_count=0, error={"kind": "oops", "message": "x"}),),
        False,
    ),
    ("count-ok", rules_page.l2_element_count, ({"elements": [1, 2], "element_count": 2},), True),
    ("count-off", rules_page.l2_element_count, ({"elements": [1, 2], "element_count": 3},), False),
    ("id-ok", rules_page.l2_element_id, ([_el("p3-tbl1", "table")], 3), True),
    ("id-wrong-page", rules_page.l2_element_id, ([_el("p2-tbl1", "table")], 3), False),
    ("id-wrong-abbr", rules_page.l2_element_id, ([_el("p3-txt1", "table")], 3), False),
    (
        "id-huge-page",
        rules_page.l2_element_id,
        ([_el("p" + "9" * 5000 + "-txt1", "text")], 3),
        False,
    ),
    ("id-huge-n", rules_page.l2_element_id, ([_el("p3-txt" + "9" * 5000, "text")], 3), False),
    (
        "numbering-huge-n",
        rules_page.l2_element_numbering,
        ([_el("p0-txt1", "text"), _el("p0-txt" + "9" * 5000, "text")],),
        True,  # the id itself fails L2.element_id
    ),
    (
        "numbering-gap",
        rules_page.l2_element_numbering,
        ([_el("p0-txt1", "text"), _el("p0-txt3", "text")],),
        False,
    ),
    ("unique-dupe", rules_page.l2_unique_ids, (["p0-txt1", "p0-txt1"],), False),
    ("summary-long", rules_page.l2_summary, ([_el("p0-txt1", "text", "x" * 121)],), False),
    ("summary-two-lines", rules_page.l2_summary, ([_el("p0-txt1", "text", "a\nb")],), False),
    (
        "recall-ok",
        rules_page.l2_markdown_recall,
        ([_el("p0-ann1", "annotation", text="Check", kind="comment")], "> Comment: Check\n"),
        True,
    ),
    (
        "recall-lost-reply",
        rules_page.l2_markdown_recall,
        (
            [_el("p0-ann1", "annotation", text="Check", replies=[{"text": "Yes"}])],
            "[annotation: Comment: Check]\n",
        ),
        False,
    ),
    ("summary-120", rules_page.l2_summary, ([_el("p0-txt1", "text", "x" * 120)],), True),
    (
        "preview-unflagged",
        rules_page.l2_table_preview,
        ([_el("p0-tbl1", "table", rows=[["a"]], total_rows=40)],),
        False,
    ),
    (
        "content-ok",
        rules_page.content_shape,
        ([_el("p0-h1", "heading", level=1, text="Intro")],),
        True,
    ),
    ("content-missing", rules_page.content_shape, ([_el("p0-h1", "heading", text="I")],), False),
    (
        "content-cell-int",
        rules_page.content_shape,
        ([_el("p0-tbl1", "table", headers=["a"], rows=[[1]], total_rows=1, total_columns=1)],),
        False,
    ),
    (
        "content-separator-kind",
        rules_page.content_shape,
        ([_el("p0-sep1", "separator", kind="dash")],),
        False,
    ),
    (
        "form-ok",
        rules_page.content_form,
        _form(
            {"type": "checkbox", "value": "Yes", "kind": "checkbox", "checked": True},
            {"options": ["Yes"]},
        ),
        True,
    ),
    ("form-text-ok", rules_page.content_form, _form({"type": "text", "kind": "text"}), True),
    (
        "form-spec-only",  # SPEC's name/type/value alone: no label, no kind
        rules_page.content_form,
        ([_el("p0-frm1", "form", fields=[{"name": "a", "type": "text", "value": "x"}])],),
        False,
    ),
    ("form-unknown-kind", rules_page.content_form, _form({"kind": "slider"}), False),
    ("form-box-unchecked", rules_page.content_form, _form({"kind": "checkbox"}), False),
    (
        "form-off-box-with-value",
        rules_page.content_form,
        _form({"kind": "checkbox", "checked": False, "value": "Yes"}),
        False,
    ),
    ("form-checked-text", rules_page.content_form, _form({"checked": False}), False),
    ("form-option-int", rules_page.content_form, _form({"kind": "list", "options": [1]}), False),
    (
        "filter-ok",
        rules_page.l2_categories_filter,
        (
            {"elements": [_el("p0-txt1", "text"), _el("p0-tbl1", "table")]},
            {"elements": [_el("p0-tbl1", "table")], "element_count": 1},
            ["table"],
        ),
        True,
    ),
    (
        "filter-ignored",
        rules_page.l2_categories_filter,
        (
            {"elements": [_el("p0-txt1", "text"), _el("p0-tbl1", "table")]},
            {"elements": [_el("p0-txt1", "text"), _el("p0-tbl1", "table")], "element_count": 2},
            ["table"],
        ),
        False,
    ),
    (
        "l3-preview-rows",
        rules_page.l3_content_matches,
        ({"rows": [["a"], ["b"]], "total_rows": 2}, {"rows": [["a"]], "total_rows": 2}, "table"),
        True,
    ),
    (
        "l3-other-rows",
        rules_page.l3_content_matches,
        ({"rows": [["z"], ["b"]], "total_rows": 2}, {"rows": [["a"]], "total_rows": 2}, "table"),
        False,
    ),
    (
        "l3-cut-cells",
        rules_page.l3_content_matches,
        (
            {"headers": [CUT_CELL], "rows": [[CUT_CELL]], "total_rows": 1},
            {"headers": ["abcdef"], "rows": [["abcdef"]], "total_rows": 1},
            "table",
            True,
        ),
        True,
    ),
    (
        "l3-cut-other-text",
        rules_page.l3_content_matches,
        ({"headers": [CUT_CELL]}, {"headers": ["abXdef"]}, "table", True),
        False,
    ),
    (
        "l3-uncut-must-equal",
        rules_page.l3_content_matches,
        ({"headers": [CUT_CELL]}, {"headers": ["abcdef"]}, "table", False),
        False,
    ),
    (
        "l3-cut-rows-dropped",
        rules_page.l3_table_rows,
        ({"rows": [["a"]], "total_rows": 3, "rows_truncated": True}, True),
        True,
    ),
    (
        "l3-rows-missing",
        rules_page.l3_table_rows,
        ({"rows": [["a"]], "total_rows": 3, "rows_truncated": True}, False),
        False,
    ),
    ("l3-cut-within", rules_page.l3_cut, ({"cut": {"bytes": 900, "max_bytes": 500}}, 480), True),
    ("l3-cut-over", rules_page.l3_cut, ({"cut": {"bytes": 900, "max_bytes": 500}}, 700), False),
    ("l3-cut-not-over", rules_page.l3_cut, ({"cut": {"bytes": 400, "max_bytes": 500}}, 300), False),
    (
        "l0-parent-listed-before",
        rules.l0_parent,
        ([DOC, {**DOC, "doc_ref": "q3-4d5e6f", "parent": DOC["doc_ref"]}],),
        True,
    ),
    ("l0-parent-unknown", rules.l0_parent, ([DOC, {**DOC, "parent": "gone-000000"}],), False),
    (
        "l0-parent-after-child",
        rules.l0_parent,
        ([{**DOC, "doc_ref": "q3-4d5e6f", "parent": DOC["doc_ref"]}, DOC],),
        False,
    ),
    ("templates-missing", surface.templates, ([f"dpe://{HOST}/{{doc_ref}}"], HOST), False),
    (
        "md-heading-title",
        surface.read_markdown_heading,
        ("## Scope\n\nBody\n", {"title": "Scope", "page_index": 0}),
        True,
    ),
    (
        "md-heading-missing",
        surface.read_markdown_heading,
        ("Body\n", {"title": "Scope", "page_index": 0}),
        False,
    ),
    (
        "md-heading-untitled-page",
        surface.read_markdown_heading,
        ("Body continued\n", {"title": "Page 3", "page_index": 2}),
        True,
    ),
    (
        "md-heading-page-number-said",
        surface.read_markdown_heading,
        ("# Page 3\n\nBody continued\n", {"title": "Page 3", "page_index": 2}),
        False,
    ),
]


@pytest.mark.parametrize(("check", "args", "ok"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_check_rule_table(check: Rule[Any], args: tuple[Any, ...], ok: bool) -> None:
    problems = check(*args)
    assert (problems == []) is ok, problems


def test_check_rules_registered_with_ids() -> None:
    from dpe_server.check import runner  # noqa: F401  (registers the runner's rules)

    assert {"L1.page_total", "L2.element_count", "err.4204.scheme", "sub.listen"} <= set(RULES)
    assert all(RULES.values())


def test_check_invalid_cases_cover_every_value_rule() -> None:
    cases = invalid_cases(f"dpe://{HOST}/d-1", f"dpe://{HOST}/d-1/pages/0", None)
    rules_hit = {c.rule for c in cases}
    assert rules_hit == {
        f"err.4204.{r}"
        for r in (
            "scheme",
            "host",
            "sub_path",
            "format",
            "depth",
            "offset",
            "limit",
            "categories",
            "duplicate",
        )
    }
    assert all(c.uri != f"dpe://{HOST}/d-1" for c in cases)


@pytest.mark.parametrize(
    ("words", "want"),
    [
        (["http://127.0.0.1:8765/mcp"], HttpTarget("http://127.0.0.1:8765/mcp", "t")),
        (["dpe-server serve 'my docs'"], StdioTarget(("dpe-server", "serve", "my docs"))),
        (["dpe-server", "serve", "docs"], StdioTarget(("dpe-server", "serve", "docs"))),
    ],
    ids=["url", "quoted-command", "command-words"],
)
def test_check_parse_target(words: list[str], want: object) -> None:
    assert parse_target(words, "t" if isinstance(want, HttpTarget) else None) == want


def test_check_parse_target_empty_refused() -> None:
    with pytest.raises(ValueError, match="target"):
        parse_target([])


def test_check_report_text_and_exit_code() -> None:
    report = Report(target="x")
    report.era = "legacy"
    report.check(rules.doc_fields, "dpe://h/d", DOC)
    assert report.exit_code == 0
    report.check(rules.doc_fields, "dpe://h/d", _doc(page_count=...))
    report.skip("notify.updated", "needs a change")
    text = render_text(report)
    assert report.exit_code == 1
    assert "[legacy] doc.fields  dpe://h/d" in text
    assert "expected: field page_count (an integer)" in text
    assert "NOT CHECKED (1)" in text
    assert text.rstrip().endswith("1 passed, 1 failed (1 rules), 1 not checked")


def test_check_spec_abbreviations_are_the_nineteen() -> None:
    assert len(spec.ABBR) == 19
    assert len(set(spec.ABBR.values())) == 19


def test_check_spec_agrees_with_the_server_model() -> None:
    from dpe_server.model.tree import Category

    assert {c.value: c.abbr for c in Category} == spec.ABBR
