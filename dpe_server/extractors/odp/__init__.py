"""OpenDocument presentations (.odp, .otp): a page is a slide (one is read without the others).
`extract` is the extractor, imported when a file of the format is first read."""

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
