"""dpe-server: office files as Document-Page-Element trees, served as dpe:// MCP resources.

Its parts, each importing only the parts below it (`tests/test_layout.py`, docs/architecture.md):
`cli` (the `dpe-server` command; `__main__` runs it), over `surface` (the MCP handlers and
transports) and `check` (`dpe-server check`, the conformance checker for any DPE server), over
`read` (what clients ask, free of any transport: reads, search, completion), over `catalog`
(the serving process's state: the folder, the store, the watcher) and `views` (the payloads
and their Markdown and text), over `isolation` (parsing untrusted files out of the serving
process), over `extractors` (the formats), over `model` (the tree, URIs, errors).
"""

__version__ = "0.1.0"

TOKEN_ENV = "DPE_SERVER_TOKEN"
"""The environment variable holding the HTTP bearer token (`--token`)."""
PASSWORDS_ENV = "DPE_SERVER_PASSWORDS"
"""The environment variable naming the passwords file when `--passwords` is not given."""
