"""OpenDocument texts (.odt, .ott, flat .fodt): a page is a section between top-level headings, as
for docx. `extract` is the extractor, imported when a file of the format is first read.
"""

from __future__ import annotations

from dpe_server.extractors.odf import odf_format

FORMAT = odf_format(
    "odt",
    (".odt", ".ott", ".fodt"),
    "an OpenDocument text",
    "section",
    paged=False,
    mimetypes=(
        "application/vnd.oasis.opendocument.text",
        "application/vnd.oasis.opendocument.text-template",
    ),
)
