"""The MCP surface: thin handlers over the read side (`dpe_server.read`), and the transports.

- `app`: the low-level `Server` and its handlers (resources, templates, subscribe, completion);
- `errors`: the one mapping of domain errors to JSON-RPC errors;
- `notify`: the one fan-out of changes to sessions of both protocol eras;
- `tools`: the `read` and `search` tools;
- `transports`: stdio and streamable HTTP, and stopping on a signal; `connections`: the bounds
  on HTTP connections, beneath the ASGI app;
- `progress`: the progress bar on a terminal (indexing a folder, reading it whole);
- `viewer`: `dpe-server view`, a web page of what the server sees, over the same reader and
  search; `viewer_html`: its pages' HTML; `viewer_pictures`: its pages' pictures (pdf pages by
  PDFium, office pages from LibreOffice's pdf export).
"""
