"""What any format builds with, whatever its file: no format's names, no library of one.

`items` (elements found inside a paragraph), `forms` (form elements), `tables` (a table's
grid written as row blocks and nested tables), `pages` (a flowing text's page plan),
`numformat` (list counters), `fonts` (the monospace fonts), `xml` (namespace-agnostic XML
helpers). A format imports these; they import no format (`tests/test_layout.py`).
"""
