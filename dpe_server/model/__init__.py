"""The DPE model: what every other part of the server speaks, importing nothing of them.

- `tree`: Document, Page, Element (frozen dataclasses that turn into JSON and back), the 19
  categories, element ids;
- `info`: the headers of a tree that Level 0 and 1 show (`DocumentInfo`, `PageInfo`);
- `errors`: the project's errors, request errors with their DPE codes and extraction errors;
- `uri`: `dpe://` URIs, parsed with every validation rule, and formatted;
- `integers`: the one parser of untrusted numbers (bounded);
- `metadata`, `summaries`: titles, keywords and one-line summaries derived from a tree.
"""
