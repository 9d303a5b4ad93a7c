"""dpe:// URI parsing and formatting: every validation rule of SPEC §2."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpe_server.model.errors import InvalidUri
from dpe_server.model.tree import Category
from dpe_server.model.uri import PARAMS, DpeUri, Param, format_uri, parse

H = "dpe://local.dpe.docs"

VALID: list[tuple[str, str, dict[str, object]]] = [
    ("level0", H, {"level": 0, "host": "local.dpe.docs"}),
    ("level0-slash", H + "/", {"level": 0}),
    ("level0-format", H + "?format=markdown", {"level": 0, "format": "markdown"}),
    ("level0-offset-limit", H + "?offset=5&limit=3", {"level": 0, "offset": 5, "limit": 3}),
    ("level0-ignores-depth", H + "?depth=bogus", {"level": 0, "depth": "metadata"}),
    ("level1", H + "/rpt-2026", {"level": 1, "doc_ref": "rpt-2026"}),
    ("level1-slash", H + "/rpt-2026/", {"level": 1, "doc_ref": "rpt-2026"}),
    ("level1-depth-pages", H + "/d?depth=pages", {"depth": "pages"}),
    ("level1-depth-metadata", H + "/d?depth=metadata", {"depth": "metadata"}),
    ("level1-offset-zero", H + "/d?depth=pages&offset=0", {"offset": 0}),
    ("level1-limit-1", H + "/d?limit=1", {"limit": 1}),
    ("level1-limit-100", H + "/d?limit=100", {"limit": 100}),
    ("level1-format-text", H + "/d?format=text", {"format": "text"}),
    ("level1-ignores-categories", H + "/d?categories=nope", {"categories": None}),
    ("level1-unknown-param", H + "/d?foo=bar", {"level": 1}),
    ("level1-percent-decoded", H + "/a%20b", {"doc_ref": "a b"}),
    ("level2", H + "/d/pages/0", {"level": 2, "page_index": 0}),
    ("level2-large", H + "/d/pages/1234", {"page_index": 1234}),
    ("level2-18-digits", H + "/d/pages/" + "9" * 18, {"page_index": 10**18 - 1}),
    (
        "level2-categories",
        H + "/d/pages/0?categories=table,pivot_table",
        {"categories": frozenset({Category.TABLE, Category.PIVOT_TABLE})},
    ),
    ("level2-category-spaces", H + "/d/pages/0?categories=table,%20text", {"level": 2}),
    ("level2-ignores-depth", H + "/d/pages/0?depth=x&limit=0", {"limit": None}),
    ("level2-format-markdown", H + "/d/pages/3?format=markdown", {"format": "markdown"}),
    ("level3", H + "/d/elements/p0-tbl1", {"level": 3, "element_id": "p0-tbl1"}),
    ("level3-foreign-id", H + "/d/elements/tbl-001", {"element_id": "tbl-001"}),
    ("level3-foreign-long-id", H + "/d/elements/p" + "9" * 5000, {"level": 3}),
    ("level3-18-digit-page", H + "/d/elements/p" + "9" * 18 + "-txt1", {"level": 3}),
    ("level0-offset-18-digits", H + "?offset=" + "9" * 18, {"offset": 10**18 - 1}),
    ("level3-percent-id", H + "/d/elements/a%2Fb", {"element_id": "a/b"}),
    ("level3-ignores-categories", H + "/d/elements/x?categories=", {"level": 3}),
    ("scheme-upper", "DPE://h/d", {"level": 1, "host": "h"}),
    ("host-port", "dpe://h:8080/d", {"host": "h:8080"}),
]

INVALID: list[tuple[str, str, str]] = [
    ("scheme-http", "http://h/d", "scheme"),
    ("scheme-none", "//h/d", "scheme"),
    ("scheme-file", "file:///etc/passwd", "scheme"),
    ("scheme-typo", "dpee://h/d", "scheme"),
    ("host-empty", "dpe:///d", "host"),
    ("host-empty-bare", "dpe://", "host"),
    ("doc-ref-empty", "dpe://h//pages/0", "doc_ref"),
    ("subpath-unknown", "dpe://h/d/sheets/0", "sub-path"),
    ("subpath-pages-missing", "dpe://h/d/pages", "sub-path"),
    ("subpath-pages-empty", "dpe://h/d/pages/", "sub-path"),
    ("subpath-pages-negative", "dpe://h/d/pages/-1", "sub-path"),
    ("subpath-pages-word", "dpe://h/d/pages/one", "sub-path"),
    ("subpath-pages-float", "dpe://h/d/pages/1.5", "sub-path"),
    ("subpath-pages-extra", "dpe://h/d/pages/1/x", "sub-path"),
    ("subpath-elements-empty", "dpe://h/d/elements/", "sub-path"),
    ("subpath-elements-missing", "dpe://h/d/elements", "sub-path"),
    ("subpath-elements-extra", "dpe://h/d/elements/a/b", "sub-path"),
    ("subpath-pages-19-digits", "dpe://h/d/pages/" + "9" * 19, "sub-path"),
    ("subpath-pages-5000-digits", "dpe://h/d/pages/" + "9" * 5000, "sub-path"),
    ("subpath-pages-superscript", "dpe://h/d/pages/%C2%B2", "sub-path"),
    ("subpath-elements-huge-page", "dpe://h/d/elements/p" + "9" * 5000 + "-txt1", "sub-path"),
    ("subpath-elements-huge-n", "dpe://h/d/elements/p0-txt" + "9" * 5000, "sub-path"),
    ("format-unknown", "dpe://h/d?format=html", "format"),
    ("format-case", "dpe://h/d?format=JSON", "format"),
    ("format-empty", "dpe://h?format=", "format"),
    ("format-level2", "dpe://h/d/pages/0?format=xml", "format"),
    ("format-level3", "dpe://h/d/elements/e?format=", "format"),
    ("depth-unknown", "dpe://h/d?depth=all", "depth"),
    ("depth-empty", "dpe://h/d?depth=", "depth"),
    ("offset-negative", "dpe://h/d?offset=-1", "offset"),
    ("offset-word", "dpe://h/d?offset=two", "offset"),
    ("offset-float", "dpe://h/d?offset=1.0", "offset"),
    ("offset-level0", "dpe://h?offset=x", "offset"),
    ("offset-5000-digits", "dpe://h/d?offset=" + "9" * 5000, "offset"),
    ("offset-level0-19-digits", "dpe://h?offset=" + "1" + "0" * 18, "offset"),
    ("limit-zero", "dpe://h/d?limit=0", "limit"),
    ("limit-101", "dpe://h/d?limit=101", "limit"),
    ("limit-negative", "dpe://h/d?limit=-5", "limit"),
    ("limit-word", "dpe://h/d?limit=ten", "limit"),
    ("limit-level0", "dpe://h?limit=1000", "limit"),
    ("limit-5000-digits", "dpe://h/d?limit=" + "9" * 5000, "limit"),
    ("categories-unknown", "dpe://h/d/pages/0?categories=tables", "categories"),
    ("categories-empty", "dpe://h/d/pages/0?categories=", "categories"),
    ("categories-empty-item", "dpe://h/d/pages/0?categories=table,,text", "categories"),
    ("categories-trailing-comma", "dpe://h/d/pages/0?categories=table,", "categories"),
    ("duplicate-format", "dpe://h/d?format=json&format=json", "duplicate"),
    ("duplicate-ignored-param", "dpe://h/d?x=1&x=2", "duplicate"),
    ("duplicate-categories", "dpe://h/d/pages/0?categories=table&categories=text", "duplicate"),
]


@pytest.mark.parametrize(("uri", "expected"), [v[1:] for v in VALID], ids=[v[0] for v in VALID])
def test_parse_valid(uri: str, expected: dict[str, object]) -> None:
    parsed = parse(uri)
    for name, value in expected.items():
        assert getattr(parsed, name) == value, name


@pytest.mark.parametrize(("uri", "rule"), [v[1:] for v in INVALID], ids=[v[0] for v in INVALID])
def test_parse_invalid_names_rule(uri: str, rule: str) -> None:
    with pytest.raises(InvalidUri) as info:
        parse(uri)
    err = info.value
    assert err.rule == rule
    assert err.dpe_code == 4204
    data = err.data()
    assert data["uri"] == uri
    assert data["dpe_code"] == 4204
    assert str(data["reason"]).startswith(rule)
    assert err.message.endswith(".")


@pytest.mark.parametrize(
    ("uri", "words"),
    [
        ("dpe://h/d/pages/" + "9" * 5000, "pages/{N} is too large to be a page index"),
        ("dpe://h/d/elements/p" + "9" * 5000 + "-txt1", "too large"),
        ("dpe://h/d?offset=" + "9" * 5000, "offset is too large"),
        ("dpe://h/d?limit=" + "9" * 5000, "limit must be an integer from 1 to 100"),
        ("dpe://h/d/pages/" + "x" * 5000, "pages/{N} needs a non-negative integer"),
    ],
    ids=["page", "element", "offset", "limit", "not-a-number"],
)
def test_parse_oversized_number_says_so_in_one_short_sentence(uri: str, words: str) -> None:
    """Past 4,300 digits Python's int() raises its own ValueError; the reason is ours, and it
    does not quote the thousands of digits back."""
    with pytest.raises(InvalidUri) as info:
        parse(uri)
    assert words in info.value.message
    assert "18 digits" in info.value.message or "got '" in info.value.message
    assert len(info.value.message) < 160


def test_parse_defaults_when_absent() -> None:
    parsed = parse("dpe://h/d")
    assert (parsed.format, parsed.depth, parsed.offset, parsed.limit, parsed.categories) == (
        "json",
        "metadata",
        None,
        None,
        None,
    )


SAME_BODY = [
    (H, H + "?format=json&depth=pages&categories=x"),
    (H + "?offset=5&limit=3", "DPE://LOCAL.dpe.docs/?limit=3&offset=5&foo=1"),
    (H + "/d", H + "/d/?format=json&depth=metadata"),
    (H + "/d?depth=pages&offset=2", H + "/d?offset=2&depth=pages&categories=table"),
    (H + "/d/pages/0?categories=table,text", H + "/d/pages/0?categories=text,table&depth=x"),
    (H + "/d/elements/p0-tbl1", H + "/d/elements/p0-tbl1?format=json&limit=0"),
]
OTHER_BODY = [
    (H, H + "?format=markdown"),
    (H, H + "?offset=0"),
    (H + "?limit=3", H + "?limit=4"),
    (H + "/d", H + "/d?depth=pages"),
    (H + "/d?depth=pages&offset=2", H + "/d?depth=pages&offset=2&limit=20"),
    (H + "/d", H + "/e"),
    (H + "/d/pages/0", H + "/d/pages/1"),
    (H + "/d/pages/0", H + "/d/pages/0?categories=table"),
    (H + "/d/pages/0?format=text", H + "/d/pages/0?format=markdown"),
    (H + "/d/elements/p0-tbl1", H + "/d/elements/p0-tbl1?format=text"),
    (H + "/d/elements/p0-tbl1", H + "/d/elements/p0-tbl2"),
    (H + "/d/pages/0", H + "/d/elements/p0-txt1"),
]


@pytest.mark.parametrize(("one", "other"), SAME_BODY)
def test_shape_leaves_out_how_a_uri_is_spelt(one: str, other: str) -> None:
    """Parameters in another order, a default given, one its level ignores, the host's case:
    one body (shared by concurrent reads)."""
    assert parse(one).shape == parse(other).shape


@pytest.mark.parametrize(("one", "other"), OTHER_BODY)
def test_shape_holds_every_parameter_its_level_reads(one: str, other: str) -> None:
    assert parse(one).shape != parse(other).shape


def test_a_parameter_registered_once_is_read_at_its_levels_and_shapes_the_body(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def tone(uri: str, value: str | None) -> str:
        if value not in (None, "loud", "quiet"):
            raise InvalidUri(uri, "tone", f"tone must be loud or quiet, got '{value}'")
        return value or "quiet"

    monkeypatch.setitem(PARAMS, "tone", Param(frozenset({2, 3}), tone))
    page = H + "/d/pages/0"
    assert parse(page).param("tone") == "quiet"
    assert parse(page + "?tone=loud").param("tone") == "loud"
    assert parse(page + "?tone=loud").shape != parse(page).shape
    assert parse(page + "?tone=quiet").shape == parse(page).shape
    assert parse(H + "/d?tone=loud").shape == parse(H + "/d").shape  # not read at Level 1
    with pytest.raises(InvalidUri) as info:
        parse(H + "/d/elements/e?tone=shrill")
    assert info.value.rule == "tone"


def test_format_uri_levels() -> None:
    assert format_uri("h") == "dpe://h"
    assert format_uri("h", "d") == "dpe://h/d"
    assert format_uri("h", "d", page_index=3) == "dpe://h/d/pages/3"
    assert format_uri("h", "d", element_id="p0-tbl1") == "dpe://h/d/elements/p0-tbl1"
    assert format_uri("h", "d", query={"format": "text"}) == "dpe://h/d?format=text"


_SEGMENT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40)


@given(doc_ref=_SEGMENT, element_id=_SEGMENT, page=st.integers(min_value=0, max_value=10**6))
def test_format_parse_round_trip(doc_ref: str, element_id: str, page: int) -> None:
    as_doc = parse(format_uri("h.x", doc_ref))
    assert (as_doc.level, as_doc.doc_ref) == (1, doc_ref)
    as_page = parse(format_uri("h.x", doc_ref, page_index=page))
    assert (as_page.doc_ref, as_page.page_index) == (doc_ref, page)
    as_el = parse(format_uri("h.x", doc_ref, element_id=element_id))
    assert isinstance(as_el, DpeUri)
    assert (as_el.level, as_el.doc_ref, as_el.element_id) == (3, doc_ref, element_id)
