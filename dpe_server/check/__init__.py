"""`dpe-server check`: a conformance checker for any DPE MCP server (the contract: docs/spec.md).

`command` (the subcommand's arguments), `target` (what it connects to: stdio command, HTTP URL,
in-process server), `runner` (the server walked in each protocol era), `session` (one
connection whose reads never raise: what went wrong goes into the report), `walk` (one
document read down to its elements), `invalid` (the invalid URIs of SPEC §2, made from valid
ones). What a server is held to: `spec` (the contract's facts, written out apart from the
server's own code so that a mistake in its model is caught, not copied; `phrases` likewise:
the words a page's Markdown must carry and what a cut string kept), one function per
rule under a stable id in `rules` (documents), `rules_page` (pages and elements) and
`rules_surface` (the MCP surface), `shapes` (the field-and-type checks the payload rules
use), `fidelity` (whether a served page holds every word an independent reader finds on it),
`mailtext` (the independent reader of an e-mail file's messages), `webtext` (of a web page,
Markdown text, e-book or text file as a whole), `officetext` (of a Word, PowerPoint, Excel or
OpenDocument file as a whole).
`report` collects passed / failed / not-checked outcomes.
"""

from dpe_server.check.report import Report, render_text
from dpe_server.check.runner import run_check
from dpe_server.check.target import HttpTarget, InProcessTarget, StdioTarget, parse_target
from dpe_server.check.walk import Limits

__all__ = [
    "HttpTarget",
    "InProcessTarget",
    "Limits",
    "Report",
    "StdioTarget",
    "parse_target",
    "render_text",
    "run_check",
]
