"""The `children` job (docs/children.md): the documents at its paths inside one container,
read with the container opened once, each with its own error, stopping before a child once its
time is spent."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from dpe_server.isolation.jobs import Job, decode_children, run_job
from dpe_server.model.errors import CorruptError, UnsupportedError
from dpe_server.model.tree import Document
from fixtures.builders.protected import FIXED, plain_docx


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(zipfile.ZipInfo(name, FIXED), data)
    return buf.getvalue()


def _texts(found: list[tuple[str, Document | Exception]]) -> dict[str, object]:
    out: dict[str, object] = {}
    for path, got in found:
        out[path] = (
            got.pages[0].elements[0].content["text"] if isinstance(got, Document) else type(got)
        )
    return out


def test_each_child_is_read_with_its_own_error(tmp_path: Path) -> None:
    inner = _zip({"deep.docx": plain_docx(["DEEP"])})
    (tmp_path / "a.zip").write_bytes(
        _zip({"one.docx": plain_docx(["ONE"]), "bad.docx": b"nope", "in.zip": inner})
    )
    paths = ("one.docx", "bad.docx", "gone.docx", "notes.xyz")
    result = run_job(Job(str(tmp_path), "a.zip", "children", members=paths))
    assert _texts(decode_children(result["ok"])) == {
        "one.docx": "ONE",
        "bad.docx": CorruptError,
        "gone.docx": CorruptError,  # no longer in the archive
        "notes.xyz": UnsupportedError,
    }
    nested = run_job(Job(str(tmp_path), "a.zip\0in.zip", "children", members=("deep.docx",)))
    assert _texts(decode_children(nested["ok"])) == {"deep.docx": "DEEP"}


def test_no_child_is_started_once_the_time_is_spent(tmp_path: Path) -> None:
    (tmp_path / "a.zip").write_bytes(_zip({f"m{i}.docx": plain_docx([f"M{i}"]) for i in range(3)}))
    job = Job(str(tmp_path), "a.zip", "children", members=("m0.docx", "m1.docx"), budget=0.0)
    assert _texts(decode_children(run_job(job)["ok"])) == {"m0.docx": "M0"}  # one at least
