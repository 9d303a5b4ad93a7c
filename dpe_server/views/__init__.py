"""Views and renderers: pure functions from the model and a parsed URI to what a read returns.

- `payloads`: the JSON payloads of Level 0 to 3 (SPEC §4); `listing`: Level 0 in JSON written
  one document at a time; `jsontext`: the JSON text, built faster than `json.dumps`;
- `render`: those payloads as Markdown or plain text (SPEC §6); `render_details`: what the
  renderings say beyond an element's first line, so every word of its text reaches the reader;
- `element_cap`: the size cap of a Level 3 element, and the bounded form served over it.
"""
