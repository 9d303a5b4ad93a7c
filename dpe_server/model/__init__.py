"""The DPE model: what every other part of the server speaks, importing nothing of them.

- `tree`: Document, Page, Element (frozen dataclasses that turn into JSON and back), the 19
  categories, element ids;
- `content`: the content shape of each category (docs/content.md), typed, and its runtime check;
- `info`: the headers of a tree that Level 0 and 1 show (`DocumentInfo`, `PageInfo`);
- `errors`: the project's errors, request errors with their DPE codes and extraction errors;
- `uri`: `dpe://` URIs, parsed with every validation rule, and formatted;
- `children`: how a document inside another is named (its relative path, its `file_uri`
  fragment, how deep it is);
- `integers`: the one parser of untrusted numbers (bounded);
- `metadata`, `summaries`: titles, keywords and one-line summaries derived from a tree;
- `direction`: which way a text runs, the one rule every format uses;
- `words`: the words of an element's text, and whether a Markdown body carries them;
  `chart_data`: a chart's series as one data table, for the Markdown and text renderings.
"""
