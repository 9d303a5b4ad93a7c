"""OpenDocument presentations (.odp, .otp, flat .fodp): a page is a slide (one is read without the
others). `extract` is the extractor, imported when a file of the format is first read;
`connectors` turns shapes linked by connectors into one diagram element, as the pptx reader
does.
"""

from __future__ import annotations

from dpe_server.extractors.odf import odf_format

FORMAT = odf_format(
    "odp",
    (".odp", ".otp", ".fodp"),
    "an OpenDocument presentation",
    "slide",
    paged=True,
    mimetypes=(
        "application/vnd.oasis.opendocument.presentation",
        "application/vnd.oasis.opendocument.presentation-template",
    ),
)
