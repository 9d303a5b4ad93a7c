"""What any format builds with, whatever its file: no format's names, no library of one.

`items` (elements found inside a paragraph), `forms` (form elements), `tables` (a table's grid
written as row blocks and nested tables), `row_blocks` (long tables cut into row blocks),
`threads` (comment threads: replies under the comment they answer), `pages` (a flowing text's
page plan), `numformat` (list counters), `fonts` (the monospace fonts), `xml` (XML parsed
safely, namespace-agnostic helpers), `package` (the guarded zip reader OOXML and OpenDocument
files are read through: caps while inflating, no DTDs), `repack` (a zip written from members
copied as they were compressed, for a library that opens the zip itself; a member given a prefix
without being inflated), `zips` (what a zip is, before a format reads it), `media` (media types,
what a package is in words), `pictures` (a picture read from a package), `beside` (pictures
named by a path beside the document), `a1` (A1 references), `charts` (a chart's data summary),
`diagrams` (a diagram's content), `panics` (a Rust library's panic kept off stderr), `charset`
(a text file's encoding, and what a text file is not), `whole` (the entry points of a format
read whole, the file read up to the cap), `values` (sheets known only by their values, laid out
as the registry says), `soffice` (LibreOffice run on a file's bytes: conversions, pdf exports),
`sandbox` (what keeps that run off the network and from following links), `handed` (what the
registry hands a format: another format's reader). A format imports these; they import no format
(`tests/test_layout.py`).
"""
