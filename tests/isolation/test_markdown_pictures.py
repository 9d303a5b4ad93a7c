"""A Markdown picture beside the text (`![alt](pic.png)`) is served at Level 3 by the image
job, opened confined to the served folder: `..` out of it, an absolute path, a symlink, a
remote or `file:` URL give no bytes and open nothing outside; a missing picture is an image
named without bytes, never an error of the document."""

from __future__ import annotations

import base64
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dpe_server.isolation.jobs import Job, run_job
from dpe_server.isolation.pictures import MAX_BLOB_BYTES, beside
from dpe_server.model.tree import JSON, Category, Document
from fixtures.builders import markdown
from fixtures.builders.markdown import png

PNG = png()
OTHER = png(8, 8)


def _images(root: Path, rel: str) -> dict[str, dict[str, JSON]]:
    """The image elements of the document at `rel`, by description: their metadata."""
    result = run_job(Job(str(root), rel, "extract"))
    assert "ok" in result, result
    doc = Document.from_json(result["ok"])
    return {
        str(el.content["description"]): dict(el.metadata)
        for page in doc.pages
        for el in page.elements
        if el.category is Category.IMAGE
    }


def _served(root: Path, rel: str, metadata: dict[str, JSON]) -> tuple[bytes, str] | None:
    result = run_job(Job(str(root), rel, "image", metadata=metadata))
    assert "ok" in result, result  # never an error of the document
    found = result["ok"]
    if found is None:
        return None
    assert isinstance(found, dict)
    return base64.b64decode(str(found["data"])), str(found["mime_type"])


def test_a_picture_beside_the_text_is_served(tmp_path: Path) -> None:
    (tmp_path / "notes" / "pics").mkdir(parents=True)
    (tmp_path / "notes" / "pics" / "otter.png").write_bytes(PNG)
    (tmp_path / "top.gif").write_bytes(OTHER)  # a .gif named, PNG bytes: mime from content
    (tmp_path / "notes" / "readme.md").write_text(
        '# Otters\n\n![An otter](pics/otter.png)\n\n![Top](<../top.gif> "up")\n'
        "![Spaced](pics/otter.png?v=2#x)\n"
    )
    images = _images(tmp_path, "notes/readme.md")
    assert images["An otter"] == {"file": "pics/otter.png"}
    assert _served(tmp_path, "notes/readme.md", images["An otter"]) == (PNG, "image/png")
    assert _served(tmp_path, "notes/readme.md", images["Top"]) == (OTHER, "image/png")
    assert _served(tmp_path, "notes/readme.md", images["Spaced"]) == (PNG, "image/png")


def test_the_readme_fixture_serves_the_picture_beside_it(fixture_dir: Path) -> None:
    images = _images(fixture_dir, markdown.README)
    assert images["MD-Alt Otter diagram"] == {"file": markdown.PICTURE}
    served = _served(fixture_dir, markdown.README, images["MD-Alt Otter diagram"])
    assert served == ((fixture_dir / markdown.PICTURE).read_bytes(), "image/png")
    assert _served(fixture_dir, markdown.README, images["build"]) is None  # remote: never


def _opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every path `os.open` is asked for from now on, made absolute (a `dir_fd` resolved)."""
    seen: list[str] = []
    real: Callable[..., int] = os.open

    def recording(path: Any, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        where = os.readlink(f"/proc/self/fd/{dir_fd}") if dir_fd is not None else ""
        seen.append(os.path.normpath(os.path.join(where, os.fsdecode(path))))
        return real(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", recording)
    return seen


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to name descriptors")
def test_no_picture_is_read_from_outside_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = tmp_path / "outside.png"
    outside.write_bytes(OTHER)
    root = tmp_path / "served"
    (root / "sub").mkdir(parents=True)
    (root / "inside.png").write_bytes(PNG)
    (root / "link.png").symlink_to(outside)
    (root / "linked").symlink_to(tmp_path)
    (root / "sub" / "notes.md").write_text(
        "# Pictures\n\n"
        "![ok](../inside.png)\n"
        "![up](../../outside.png)\n"
        "![escaped](%2E%2E/%2E%2E/outside.png)\n"
        "![deep](../sub/../../outside.png)\n"
        f"![absolute]({outside})\n"
        "![link](../link.png)\n"
        "![folder link](../linked/outside.png)\n"
        f"![file url](file://{outside})\n"
        "![remote](https://example.com/outside.png)\n\n"
        f'<img alt="html file url" src="file://{outside}">\n'
        '<img alt="html up" src="../../outside.png">\n'
    )
    images = _images(root, "sub/notes.md")
    assert images["remote"] == {"url": "https://example.com/outside.png"}  # named, as before
    assert images["absolute"] == {"url": str(outside)}
    assert images["html up"] == {"file": "../../outside.png"}
    opened = _opened(monkeypatch)
    served = {name: _served(root, "sub/notes.md", meta) for name, meta in images.items()}
    assert served.pop("ok") == (PNG, "image/png")
    assert served == dict.fromkeys(served)  # every other: no bytes
    assert opened
    assert all(p.startswith(str(root.resolve())) for p in opened), opened


def test_a_missing_or_unshowable_picture_is_named_without_bytes(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not a picture")
    (tmp_path / "fake.png").write_text("not a picture either")
    (tmp_path / "folder.png").mkdir()
    with (tmp_path / "huge.png").open("wb") as f:
        f.write(PNG)
        f.truncate(MAX_BLOB_BYTES + 1)
    (tmp_path / "readme.md").write_text(
        "# Notes\n\n![gone](nowhere.png) ![text](notes.txt) ![fake](fake.png) "
        "![folder](folder.png) ![huge](huge.png)\n"
    )
    images = _images(tmp_path, "readme.md")
    assert images["gone"] == {"file": "nowhere.png"}
    assert {name: _served(tmp_path, "readme.md", meta) for name, meta in images.items()} == {
        "gone": None,
        "text": None,
        "fake": None,
        "folder": None,
        "huge": None,
    }


@pytest.mark.parametrize(
    ("rel", "file", "expected"),
    [
        ("readme.md", "pic.png", "pic.png"),
        ("a/b/readme.md", "../c/./pic.png", "a/c/pic.png"),
        ("a/readme.md", "../pic.png", "pic.png"),
        ("readme.md", "../pic.png", None),
        ("a/readme.md", "../../pic.png", None),
        ("readme.md", "/etc/pic.png", None),
        ("readme.md", "pics/", None),
        ("readme.md", "pics/..", None),
        ("mail.eml\0readme.md", "pic.png", None),  # a child's pictures are in its container
    ],
)
def test_beside_resolves_inside_the_folder_only(rel: str, file: str, expected: str | None) -> None:
    assert beside(rel, file) == expected
