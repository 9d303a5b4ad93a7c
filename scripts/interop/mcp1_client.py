"""Drive dpe-server with an mcp 1.x client (the handshake-era SDK most hosts ship today).

Runs inside its own virtualenv (mcp>=1.20,<2), created by `scripts/interop`; it never imports
dpe_server. Over stdio it starts the server itself; over HTTP it connects to a running one.

    python mcp1_client.py --folder DIR --stdio PYTHON [SERVER ARGS...]
    python mcp1_client.py --folder DIR --url http://127.0.0.1:PORT/mcp

The folder is edited (one file rewritten, one added then removed) to see the notifications.
Prints one line per check; exits 1 when any check failed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import sys
import time
from collections.abc import AsyncIterator, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import McpError
from pydantic import AnyUrl

FORMATS = {"json": "application/json", "markdown": "text/markdown", "text": "text/plain"}
NOT_FOUND = -32002  # handshake era (SPEC §3)
INVALID_PARAMS = -32602
SETTLE_S = 90.0
"""How long the list may take to settle (every file probed) on a busy machine."""


class Checks:
    def __init__(self, label: str) -> None:
        self.label = label
        self.passed = 0
        self.failed: list[str] = []

    def __call__(self, name: str, ok: bool, detail: object = "") -> bool:
        if ok:
            self.passed += 1
            print(f"  ok   {name}")
        else:
            self.failed.append(name)
            print(f"  FAIL {name}: {detail}")
        return ok


class Inbox:
    """Notifications received on the session."""

    def __init__(self) -> None:
        self.items: list[Any] = []

    async def handler(self, message: Any) -> None:
        if isinstance(message, types.ServerNotification):
            self.items.append(message.root)

    async def wait_for(self, predicate: Callable[[Any], bool], timeout: float) -> Any | None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for item in self.items:
                if predicate(item):
                    self.items.remove(item)
                    return item
            await anyio.sleep(0.02)
        return None


def is_list_changed(n: Any) -> bool:
    return bool(n.method == "notifications/resources/list_changed")


def documents_in(folder: Path) -> list[Path]:
    """The documents of the folder: it is a copy of the built fixtures, every file of which is
    one (this client runs without dpe-server installed, so it cannot ask which suffixes are
    served)."""
    return sorted(
        p for p in folder.rglob("*") if p.is_file() and not p.name.startswith((".", "~$"))
    )


@contextlib.asynccontextmanager
async def session(args: argparse.Namespace, inbox: Inbox) -> AsyncIterator[ClientSession]:
    timeout = timedelta(seconds=60)
    if args.url:
        async with (
            streamable_http_client(args.url) as (read, write, _),
            ClientSession(read, write, timeout, message_handler=inbox.handler) as s,
        ):
            yield s
    else:
        params = StdioServerParameters(command=args.stdio[0], args=args.stdio[1:])
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write, timeout, message_handler=inbox.handler) as s,
        ):
            yield s


async def error_of(s: ClientSession, uri: str) -> types.ErrorData | None:
    try:
        await s.read_resource(AnyUrl(uri))
    except McpError as exc:
        return exc.error
    return None


async def list_all(s: ClientSession) -> tuple[list[types.Resource], int]:
    """Every resource of resources/list, followed through its cursors; and how many pages."""
    resources: list[types.Resource] = []
    cursor: str | None = None
    pages = 0
    while True:
        result = await s.list_resources(params=types.PaginatedRequestParams(cursor=cursor))
        pages += 1
        resources += result.resources
        cursor = result.nextCursor
        if not cursor or pages > 100:
            return resources, pages


def _indexing(resources: list[types.Resource]) -> int:
    return sum(1 for r in resources if (r.meta or {}).get("indexing"))


async def check_list(s: ClientSession, check: Checks, folder: Path) -> list[types.Resource]:
    # The server lists every file at once, those not yet probed `indexing: true`: wait (at
    # most SETTLE_S) until none is, as a client that needs page counts would.
    resources, pages = await list_all(s)
    deadline = anyio.current_time() + SETTLE_S
    while _indexing(resources) and anyio.current_time() < deadline:
        await anyio.sleep(0.25)
        resources, pages = await list_all(s)
    check(
        "resources/list settles (no file left indexing)",
        not _indexing(resources),
        f"{_indexing(resources)} indexing",
    )
    expected = len(documents_in(folder))
    # Attachments and archive members are documents too: their file_uri names the path inside
    # their container after `#`; every file of the folder is one of the others.
    files = [r for r in resources if "#" not in str((r.meta or {}).get("file_uri", ""))]
    check("resources/list pages with a cursor", pages > 1, f"{pages} page(s)")
    check(
        "resources/list lists every document",
        len(files) == expected and len(resources) > expected,
        f"{len(resources)} listed, {len(files)} of them files of the folder's {expected}",
    )
    first = resources[0] if resources else None
    meta = (first.meta or {}) if first else {}
    check(
        "resources/list entries carry _meta and annotations",
        first is not None
        and {"page_count", "file_type", "file_uri"} <= set(meta)
        and first.annotations is not None
        and first.annotations.lastModified is not None,
        first,
    )
    return resources


async def check_templates(s: ClientSession, check: Checks, host: str) -> None:
    result = await s.list_resource_templates()
    got = sorted(t.uriTemplate for t in result.resourceTemplates)
    want = sorted(
        [
            f"dpe://{host}/{{doc_ref}}/pages/{{page_index}}",
            f"dpe://{host}/{{doc_ref}}/elements/{{element_id}}",
        ]
    )
    check("resources/templates/list gives the two templates", got == want, got)


async def read_all_formats(s: ClientSession, check: Checks, level: str, uri: str) -> Any:
    """Read `uri` in the three formats; returns the parsed JSON payload."""
    payload: Any = None
    for fmt, mime in FORMATS.items():
        sep = "&" if "?" in uri else "?"
        result = await s.read_resource(AnyUrl(f"{uri}{sep}format={fmt}"))
        item = result.contents[0]
        text = item.text if isinstance(item, types.TextResourceContents) else ""
        ok = item.mimeType == mime and bool(text.strip())
        if fmt == "json" and ok:
            payload = json.loads(text)
        check(f"read {level} {fmt}", ok, f"{item.mimeType} {text[:80]!r}")
    return payload


async def check_reads(s: ClientSession, check: Checks, host: str, docs: list[Any]) -> None:
    catalog = await read_all_formats(s, check, "level 0", f"dpe://{host}")
    check(
        "level 0 lists the documents",
        isinstance(catalog, dict) and catalog.get("total_count") == len(docs),
        catalog and catalog.get("total_count"),
    )
    by_type: dict[str, Any] = {}
    for doc in docs:
        meta = doc.meta or {}
        if meta.get("page_count", 0) > 0 and "error" not in meta:
            by_type.setdefault(meta.get("file_type"), doc)
    check("one readable document of each format", len(by_type) >= 4, sorted(by_type))
    for file_type, doc in sorted(by_type.items()):
        uri = str(doc.uri)
        info = await read_all_formats(s, check, f"level 1 {file_type}", f"{uri}?depth=pages")
        check(
            f"level 1 {file_type} has its page index",
            bool(info and info.get("pages")),
            info and list(info)[:8],
        )
        page = await read_all_formats(s, check, f"level 2 {file_type}", f"{uri}/pages/0")
        elements = (page or {}).get("elements") or []
        if check(f"level 2 {file_type} page 0 has elements", bool(elements), page):
            element_id = elements[0]["element_id"]
            element = await read_all_formats(
                s, check, f"level 3 {file_type}", f"{uri}/elements/{element_id}"
            )
            check(
                f"level 3 {file_type} is the element asked for",
                bool(element and element.get("element_id") == element_id),
                element and element.get("element_id"),
            )


async def check_errors(s: ClientSession, check: Checks, host: str, doc_uri: str) -> None:
    cases = [
        ("unknown doc_ref", f"dpe://{host}/no-such-doc-000000", NOT_FOUND, 4201),
        ("page out of range", f"{doc_uri}/pages/9999", NOT_FOUND, 4202),
        ("unknown element", f"{doc_uri}/elements/p0-zzz99", NOT_FOUND, 4203),
        ("invalid URI", f"{doc_uri}?format=pdf", INVALID_PARAMS, 4204),
    ]
    for name, uri, code, dpe_code in cases:
        error = await error_of(s, uri)
        data = error.data if error is not None and isinstance(error.data, dict) else {}
        check(
            f"error {name}: {code} with dpe_code {dpe_code}",
            error is not None and error.code == code and data.get("dpe_code") == dpe_code,
            error,
        )


async def check_completion(s: ClientSession, check: Checks, host: str, doc: Any) -> None:
    doc_ref = str(doc.uri).rsplit("/", 1)[-1]
    pages = types.ResourceTemplateReference(
        type="ref/resource", uri=f"dpe://{host}/{{doc_ref}}/pages/{{page_index}}"
    )
    elements = types.ResourceTemplateReference(
        type="ref/resource", uri=f"dpe://{host}/{{doc_ref}}/elements/{{element_id}}"
    )
    refs = await s.complete(pages, {"name": "doc_ref", "value": doc_ref[:3]})
    check("complete doc_ref by prefix", doc_ref in refs.completion.values, refs.completion)
    idx = await s.complete(pages, {"name": "page_index", "value": ""}, {"doc_ref": doc_ref})
    check("complete page_index with doc_ref context", "0" in idx.completion.values, idx.completion)
    ids = await s.complete(
        elements, {"name": "element_id", "value": "p0-"}, {"doc_ref": doc_ref, "page_index": "0"}
    )
    check(
        "complete element_id within page 0",
        bool(ids.completion.values) and all(v.startswith("p0-") for v in ids.completion.values),
        ids.completion,
    )


def rewrite(path: Path, donor: Path) -> None:
    """Save `path` again with other content (as an editor would: a new file moved in place)."""
    tmp = path.with_name(f".{path.name}.saving")
    shutil.copyfile(donor, tmp)
    tmp.replace(path)


async def check_notifications(
    s: ClientSession, check: Checks, inbox: Inbox, folder: Path, docs: list[Any]
) -> None:
    files = documents_in(folder)
    by_path = {(d.meta or {}).get("file_uri"): d for d in docs}
    target = next((p for p in files if p.suffix == ".docx" and p.as_uri() in by_path), None)
    donor = next((p for p in files if p.suffix == ".docx" and p != target), None)
    if target is None or donor is None:
        check("a docx to edit and another to copy from", False, files)
        return
    uri = str(by_path[target.as_uri()].uri)
    await s.subscribe_resource(AnyUrl(uri))
    rewrite(target, donor)
    got = await inbox.wait_for(
        lambda n: n.method == "notifications/resources/updated" and str(n.params.uri) == uri, 20
    )
    check("subscribe + edit -> notifications/resources/updated", got is not None, uri)
    await s.unsubscribe_resource(AnyUrl(uri))

    added = folder / "interop-added.docx"
    shutil.copyfile(donor, added)
    ok = await listed_after_change(s, inbox, added.resolve().as_uri(), present=True)
    check("add a file -> notifications/resources/list_changed, then listed", ok, added)
    added.unlink()
    ok = await listed_after_change(s, inbox, added.resolve().as_uri(), present=False)
    check("delete a file -> notifications/resources/list_changed, then gone", ok, added)


async def all_file_uris(s: ClientSession) -> list[str]:
    uris: list[str] = []
    cursor: str | None = None
    while True:
        page = await s.list_resources(params=types.PaginatedRequestParams(cursor=cursor))
        uris += [str((r.meta or {}).get("file_uri")) for r in page.resources]
        cursor = page.nextCursor
        if not cursor:
            return uris


async def listed_after_change(
    s: ClientSession, inbox: Inbox, file_uri: str, *, present: bool, timeout: float = 20
) -> bool:
    """Wait for `list_changed`, re-list, until `file_uri` is (or is no longer) listed.

    The server may also send `list_changed` for its own reasons (titles refined once the
    background extraction ends), so one notification is not taken as proof of this change.
    """
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        got = await inbox.wait_for(is_list_changed, left)
        if got is None:
            return False
        if (file_uri in await all_file_uris(s)) == present:
            return True
    return False


async def run(args: argparse.Namespace) -> Checks:
    label = "http" if args.url else "stdio"
    check = Checks(label)
    inbox = Inbox()
    folder = Path(args.folder).resolve()
    async with session(args, inbox) as s:
        init = await s.initialize()
        caps = init.capabilities
        check(
            f"initialize ({init.protocolVersion}, {init.serverInfo.name})",
            caps.resources is not None
            and bool(caps.resources.subscribe)
            and bool(caps.resources.listChanged)
            and caps.completions is not None,
            caps,
        )
        docs = await check_list(s, check, folder)
        if not docs:
            return check
        host = str(docs[0].uri).split("/")[2]
        await check_templates(s, check, host)
        await check_reads(s, check, host, docs)
        readable = next(d for d in docs if (d.meta or {}).get("page_count", 0) > 0)
        await check_errors(s, check, host, str(readable.uri))
        await check_completion(s, check, host, readable)
        await check_notifications(s, check, inbox, folder, docs)
    return check


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folder", required=True, help="the folder the server serves")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--url", help="a running server's streamable HTTP endpoint")
    where.add_argument("--stdio", nargs=argparse.REMAINDER, help="the server command line")
    args = parser.parse_args()
    import importlib.metadata

    version = importlib.metadata.version("mcp")
    print(f"mcp {version} client over {'HTTP' if args.url else 'stdio'}")
    check = anyio.run(run, args)
    verdict = "PASS" if not check.failed else "FAIL"
    total = check.passed + len(check.failed)
    print(f"mcp1 {check.label}: {verdict}, {check.passed}/{total} checks ok")
    return 1 if check.failed else 0


if __name__ == "__main__":
    sys.exit(main())
