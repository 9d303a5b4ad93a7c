"""The invalid URIs of SPEC §2, made from valid ones, each with the rule id it tests.

Every case must be answered with JSON-RPC -32602 and `data.dpe_code` 4204. The scheme case
can only be sent as a URI string (the server still has to refuse it).
"""

from __future__ import annotations

from dataclasses import dataclass

from dpe_server.check.report import RULES


@dataclass(frozen=True, slots=True)
class Case:
    rule: str
    uri: str


_TEXTS = {
    "err.4204.scheme": "a scheme other than dpe is refused (4204)",
    "err.4204.host": "an empty host is refused (4204)",
    "err.4204.sub_path": "a sub-path other than pages/{N≥0} or elements/{ID} is refused (4204)",
    "err.4204.format": "a format other than json|markdown|text is refused (4204)",
    "err.4204.depth": "a depth other than metadata|pages is refused (4204)",
    "err.4204.offset": "an offset that is not an integer ≥ 0 is refused (4204)",
    "err.4204.limit": "a limit outside 1..100 is refused (4204)",
    "err.4204.categories": "an unknown or empty categories item is refused (4204)",
    "err.4204.duplicate": "a duplicated parameter is refused (4204)",
    "err.4201.doc_ref": "an unknown doc_ref is not found (4201)",
    "err.4201.host": "an unknown host is not found (4201)",
    "err.4202.page": "a page out of range is not found (4202) with data.page_count",
    "err.4203.element": "an unknown element is not found (4203)",
}
RULES.update(_TEXTS)


def invalid_cases(doc_uri: str, page_uri: str, element_uri: str | None) -> list[Case]:
    """Invalid variants of a valid Level 1, Level 2 and (when there is one) Level 3 URI."""
    rest = doc_uri.removeprefix("dpe://")
    doc_ref = rest.split("/", 1)[1]
    cases = [
        Case("err.4204.scheme", f"dpx://{rest}"),
        Case("err.4204.scheme", f"http://{rest}"),
        Case("err.4204.host", f"dpe:///{doc_ref}"),
        Case("err.4204.sub_path", f"{doc_uri}/pages/x"),
        Case("err.4204.sub_path", f"{doc_uri}/pages/-1"),
        Case("err.4204.sub_path", f"{doc_uri}/pages/1.5"),
        Case("err.4204.sub_path", f"{doc_uri}/pages"),
        Case("err.4204.sub_path", f"{doc_uri}/elements/"),
        Case("err.4204.sub_path", f"{doc_uri}/sheets/0"),
        Case("err.4204.sub_path", f"{page_uri}/extra"),
        Case("err.4204.format", f"{doc_uri}?format=html"),
        Case("err.4204.format", f"{page_uri}?format="),
        Case("err.4204.depth", f"{doc_uri}?depth=everything"),
        Case("err.4204.offset", f"{doc_uri}?depth=pages&offset=-1"),
        Case("err.4204.offset", f"{doc_uri}?depth=pages&offset=one"),
        Case("err.4204.limit", f"{doc_uri}?depth=pages&limit=0"),
        Case("err.4204.limit", f"{doc_uri}?depth=pages&limit=101"),
        Case("err.4204.limit", f"{doc_uri}?depth=pages&limit=ten"),
        Case("err.4204.categories", f"{page_uri}?categories=tables"),
        Case("err.4204.categories", f"{page_uri}?categories=table,"),
        Case("err.4204.categories", f"{page_uri}?categories="),
        Case("err.4204.duplicate", f"{doc_uri}?format=json&format=json"),
        Case("err.4204.duplicate", f"{page_uri}?categories=table&categories=text"),
    ]
    if element_uri is not None:
        cases.append(Case("err.4204.format", f"{element_uri}?format=xml"))
    return cases


def not_found_uris(host: str, doc_uri: str) -> list[Case]:
    """An unknown doc_ref and an unknown host (4201)."""
    return [
        Case("err.4201.doc_ref", f"dpe://{host}/no-such-document-0000"),
        Case("err.4201.host", f"dpe://no-such-host.invalid/{doc_uri.rsplit('/', 1)[-1]}"),
    ]
