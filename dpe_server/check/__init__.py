"""`dpe-server check`: a conformance checker for any DPE MCP server (SPEC.md).

`target` connects (stdio command, HTTP URL, in-process server), `runner` walks the server in
each protocol era, `walk` reads one document down to its elements, `rules*` hold one function
per SPEC rule under a stable id, `report` collects passed / failed / not-checked outcomes.
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
