"""`dpe-server check TARGET`: the subcommand's arguments and what it does.

dpe-server check -- dpe-server serve ./docs          a command line, spoken to over stdio
dpe-server check "dpe-server serve ./docs"           the same, as one quoted string
dpe-server check http://127.0.0.1:8765/mcp --token T a streamable HTTP endpoint
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import anyio

from dpe_server.check.report import EXIT_UNREACHABLE, RULES, render_text
from dpe_server.check.runner import run_check
from dpe_server.check.target import ERAS, Era, parse_target
from dpe_server.check.walk import Limits

TOKEN_ENV = "DPE_SERVER_TOKEN"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `check` to the `dpe-server` subcommands."""
    defaults = Limits()
    check = sub.add_parser(
        "check",
        help="check a DPE server against SPEC (a command line or an HTTP URL)",
        description="Connect to a DPE MCP server in both protocol eras, walk its catalog and "
        "check it against the DPE spec. Exit code 0: all passed; 1: failures; 2: unreachable.",
    )
    check.add_argument(
        "target",
        nargs="*",
        help="an http(s) URL, or the server's command line (after --, or as one quoted string)",
    )
    check.add_argument(
        "--token",
        default=os.environ.get(TOKEN_ENV),
        help=f"HTTP: bearer token (default: ${TOKEN_ENV})",
    )
    check.add_argument(
        "--era",
        choices=("legacy", "auto", "both"),
        default="both",
        help="protocol era: legacy (handshake), auto (2026-07-28 when offered), or both",
    )
    check.add_argument(
        "--max-docs", type=int, default=defaults.max_docs, help="documents to walk at most"
    )
    check.add_argument(
        "--max-pages",
        type=int,
        default=defaults.max_pages,
        help="pages to read per document at most",
    )
    check.add_argument(
        "--max-elements",
        type=int,
        default=defaults.max_elements,
        help="elements to read per document at most",
    )
    check.add_argument(
        "--words",
        action="store_true",
        help="also check that each pdf page holds the words poppler's pdftotext reads in the "
        "served file, each e-mail message those of its fields and body, and the pages of a web "
        "page, Markdown text, EPUB or text file every word a browser shows of the file (the "
        "files must be readable here; rule L2.words)",
    )
    check.add_argument("--json", action="store_true", help="print the report as JSON")
    check.add_argument("--verbose", action="store_true", help="list passed rules with counts")
    check.add_argument("--list-rules", action="store_true", help="list the rule ids and exit")


def run(args: argparse.Namespace) -> int:
    if args.list_rules:
        _import_rules()
        for rule_id, text in sorted(RULES.items()):
            print(f"{rule_id:28} {text}")
        return 0
    try:
        target = parse_target(args.target, args.token)
    except ValueError as exc:
        print(f"dpe-server check: {exc}", file=sys.stderr)
        return EXIT_UNREACHABLE
    eras: tuple[Era, ...] = ERAS if args.era == "both" else (args.era,)
    limits = Limits(
        max(1, args.max_docs), max(1, args.max_pages), max(1, args.max_elements), args.words
    )
    report = anyio.run(run_check, target, eras, limits)
    if args.json:
        print(json.dumps(report.to_json(), ensure_ascii=False, indent=2))
    else:
        sys.stdout.write(render_text(report, verbose=args.verbose))
    return report.exit_code


def _import_rules() -> None:
    """Rules register themselves on import; the runner imports them all."""
    from dpe_server.check import runner  # noqa: F401
