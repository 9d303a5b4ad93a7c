"""What clients ask of the catalog, free of any transport: reads of `dpe://` URIs through the
views, search, completion values.

- `plan`: the read of one URI as steps, written once (levels, pictures, the Level 3 cap, the
  key a body is shared under, the bodies), performed by `reader` and by `oneshot`;
- `reader`: `Reader.read(uri)` for the server, the `read` tool and `dpe-server read` of Level 0;
- `body_cache`: big bodies rendered once for concurrent reads, within a byte budget;
- `oneshot`: `dpe-server read` of one document, synchronously, without an event loop;
- `search`: the elements holding every word of a query (the `search` tool);
- `completion`: completion values of the templates' arguments, ranked; the rate limit.
"""
