"""Converting a legacy file with LibreOffice, headless, in a private temporary folder
(`kit.soffice`: a private profile, no network, no link followed, its own deadline).

- only true legacy bytes are converted (`kinds`: an OLE2 file holding the format's stream, or
  Rich Text), never another format LibreOffice would detect by its content;
- a result is kept in this process's memory (the last `_KEEP` conversions, by the sha-256 of
  the input), so the probe, the extraction and a picture read of one file in one worker
  convert it once.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict

from dpe_server.extractors.kit.soffice import program, run_conversion
from dpe_server.extractors.legacy import missing_error, target
from dpe_server.extractors.legacy.kinds import conversion_kind_of

_FILTERS = {"docx": "docx:MS Word 2007 XML", "pptx": "pptx:Impress MS PowerPoint 2007 XML"}
"""The export filter named outright: a .doc that is HTML opens in Writer/Web, which has no
default .docx export."""
_KEEP = 4
_done: OrderedDict[str, bytes] = OrderedDict()


def convert(data: bytes, fmt: str, timeout: float) -> bytes:
    """The bytes of `data` (a .`fmt` file) converted to its OOXML counterpart."""
    fmt = conversion_kind_of(data, fmt)  # only true legacy bytes reach LibreOffice
    key = hashlib.sha256(fmt.encode() + b"\0" + data).hexdigest()
    if key in _done:
        _done.move_to_end(key)
        return _done[key]
    out_fmt = target(fmt)
    binary = program()
    if binary is None:
        raise missing_error(fmt)
    converted = run_conversion(
        binary,
        data,
        suffix=f".{fmt}",
        out_suffix=f".{out_fmt}",
        filter_arg=_FILTERS[out_fmt],
        timeout=timeout,
    )
    _done[key] = converted
    while len(_done) > _KEEP:
        _done.popitem(last=False)
    return converted
