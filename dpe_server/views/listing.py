"""Level 0 in JSON, written one document at a time: the text of
`jsontext.dumps(catalog_view(host, docs, uri))`, without the folder's summaries side by side.

A whole Level 0 of 100,000 documents as one payload is 100,000 dicts, their lists and strings,
then the text's pieces, all alive at once (about 2.5 KB per document); the allocator keeps most
of that memory once it is freed (bench/README.md, "Per-entry costs"). Here each batch of
documents is summarised, written and dropped before the next: what grows with the folder is
the text alone.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from dpe_server.model.info import DocumentInfo
from dpe_server.model.uri import DpeUri
from dpe_server.views import jsontext
from dpe_server.views.payloads import catalog_range, document_summary

BATCH = 256
"""Documents summarised and written per piece of text."""
_ITEM = "\n    "
"""Where a document's lines start: inside `"documents": [`, inside the top object."""


def catalog_json(
    host: str, docs: Sequence[DocumentInfo], uri: DpeUri, batch: int = BATCH
) -> Iterator[str]:
    """The JSON text of Level 0 in pieces (joined, the body): the opening with the first
    batch of documents, each next batch, then the closing. `docs` is read a batch at a time
    (a slice each), so a lazy listing builds `batch` DocumentInfos at once."""
    shown = catalog_range(len(docs), uri)
    out = ['{\n  "documents": [']
    separator = _ITEM
    for start in range(shown.start, shown.stop, batch):
        for doc in docs[start : min(start + batch, shown.stop)]:
            out.append(separator)
            jsontext.write(document_summary(host, doc), _ITEM, out)
            separator = "," + _ITEM
        yield "".join(out)
        out = []
    out.append("\n  ]" if shown else "]")
    out.append(f',\n  "total_count": {len(docs)}\n}}')
    yield "".join(out)
