"""Views and renderers: pure functions from the model and a parsed URI to what a read returns.

- `payloads`: the JSON payloads of Level 0 to 3 (SPEC §4);
- `render`: those payloads as Markdown or plain text (SPEC §6);
- `element_cap`: the size cap of a Level 3 element, and the bounded form served over it.
"""
