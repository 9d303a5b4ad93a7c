"""A read of a `dpe://` URI, free of any transport: the catalog's trees through the views.

- `reader`: `Reader.read(uri)` for the server, the `read` tool and `dpe-server read` of Level 0;
- `body_cache`: big bodies rendered once for concurrent reads, within a byte budget;
- `oneshot`: `dpe-server read` of one document, synchronously, without an event loop.
"""
