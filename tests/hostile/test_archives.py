"""Hostile archives (issue 35): a zip bomb, a member lying about its size, 20,000 members,
`../` and absolute names, zips nested 5 deep, an encrypted member, a member that is not what
its name says. Each is an error of that member alone, reported where it is listed or read;
the archive and its other members are served, and nothing is written outside the cache."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from dpe_server.catalog.catalog import Catalog
from dpe_server.catalog.store import MemoryStore
from dpe_server.isolation.backends import ThreadBackend
from dpe_server.isolation.client import InlineJobs, run_inline
from dpe_server.isolation.passwords import NO_PASSWORDS, Passwords
from dpe_server.model import children
from dpe_server.model.errors import CorruptError, EncryptedError, TooLargeError, UnsupportedError
from dpe_server.model.tree import Category, Document, Page
from fixtures.builders.protected import plain_docx
from tests.hostile.zipgen import Member, plain, repeat_deflate, write_zip, zipcrypto

pytestmark = pytest.mark.anyio

MIB = 1024 * 1024
GOOD = plain_docx(["GOOD-SENTINEL"])


def extract(root: Path, rel: str, passwords: Passwords = NO_PASSWORDS) -> Document:
    return run_inline(InlineJobs(passwords=passwords).extract(root, rel))


def links(page: Page) -> dict[str, dict[str, object]]:
    """Each link of the page by member name: its content, and its metadata (`_meta`)."""
    return {
        str(e.content["name"]): {**e.content, "_meta": dict(e.metadata)}
        for e in page.elements
        if e.category is Category.LINK
    }


def _archive(root: Path, *members: Member) -> str:
    write_zip(root / "a.zip", [plain("good.docx", GOOD), *members])
    return "a.zip"


def _children(doc: Document) -> list[str]:
    return [str(c["path"]) for c in doc.metadata.get("children") or ()]  # type: ignore[union-attr,index]


def test_a_zip_bomb_member_is_listed_with_why_and_never_read(tmp_path: Path) -> None:
    rel = _archive(tmp_path, repeat_deflate("bomb.docx", b"", b"\0" * 65536, 256, b""))
    doc = extract(tmp_path, rel)
    bomb = links(doc.pages[0])["bomb.docx"]
    assert bomb["size"] == 16 * MIB
    assert "compressed more than 100 to 1" in str(bomb["_meta"])
    assert _children(doc) == ["good.docx"]
    with pytest.raises(TooLargeError, match="zip bomb"):
        extract(tmp_path, f"{rel}\0bomb.docx")
    assert "GOOD-SENTINEL" in str(extract(tmp_path, f"{rel}\0good.docx").pages[0].elements)


def test_a_member_lying_about_its_size_stops_inflating(tmp_path: Path) -> None:
    """zipfile inflates no more than the declared size, then finds the CRC wrong."""
    liar = repeat_deflate("liar.docx", b"", b"\0" * 65536, 256, b"", declared=4096)
    rel = _archive(tmp_path, liar)
    assert _children(extract(tmp_path, rel)) == ["good.docx", "liar.docx"]
    with pytest.raises(CorruptError, match="Bad CRC-32"):
        extract(tmp_path, f"{rel}\0liar.docx")


def test_twenty_thousand_members_are_listed_up_to_the_cap(tmp_path: Path) -> None:
    members = [plain(f"m/{i:05}.docx", b"x", deflate=False) for i in range(20_000)]
    doc = extract(tmp_path, _archive(tmp_path, *members))
    page = doc.pages[0]
    assert page.metadata["members"] == 20_001
    assert page.metadata["truncated"] is True
    assert doc.metadata["truncated"] is True
    assert len(_children(doc)) == 10_000  # Limits.max_members


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("../../outside.docx", "leaves the archive"),
        ("/etc/absolute.docx", "absolute path"),
        ("C:/windows.docx", "absolute path"),
    ],
)
def test_a_name_leaving_the_archive_is_never_a_document(
    tmp_path: Path, name: str, why: str
) -> None:
    rel = _archive(tmp_path, plain(name, GOOD))
    doc = extract(tmp_path, rel)
    assert why in str(links(doc.pages[0])[name]["_meta"])
    assert _children(doc) == ["good.docx"]
    with pytest.raises(UnsupportedError, match=why):
        extract(tmp_path, f"{rel}\0{name}")


def test_an_encrypted_member_opens_with_the_passwords_given(tmp_path: Path) -> None:
    rel = _archive(tmp_path, zipcrypto("secret.docx", plain_docx(["ZIPPED-SECRET"]), b"pw-42"))
    doc = extract(tmp_path, rel)
    assert links(doc.pages[0])["secret.docx"]["encrypted"] is True
    with pytest.raises(EncryptedError, match="--passwords"):
        extract(tmp_path, f"{rel}\0secret.docx")
    given = Passwords(patterns=(("a.zip", ("wrong", "pw-42")),))
    opened = extract(tmp_path, f"{rel}\0secret.docx", given)
    assert "ZIPPED-SECRET" in str(opened.pages[0].elements)


def _nested(depth: int) -> bytes:
    """A zip holding a zip ... `depth` archives deep, the innermost holding a docx."""
    data, name = plain_docx(["NESTED-SENTINEL"]), "inner.docx"
    for level in range(depth, 0, -1):
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as z:
            z.writestr(zipfile.ZipInfo(name, (2024, 1, 1, 0, 0, 0)), data)
        data, name = out.getvalue(), f"level{level}.zip"
    return data


async def test_nesting_is_served_three_deep_and_no_deeper(tmp_path: Path) -> None:
    (tmp_path / "nest.zip").write_bytes(_nested(5))
    (tmp_path / "b.zip").write_bytes(_nested(1))
    write_zip(
        tmp_path / "broken.zip", [plain("bad.docx", b"not a zip at all"), plain("ok.docx", GOOD)]
    )
    catalog = Catalog(tmp_path, "h", ThreadBackend(), store=MemoryStore())
    await catalog.start()
    await catalog.warm()
    for _ in range(children.MAX_DEPTH):  # each read of a container lists its children
        for entry in catalog.entries():
            if entry.file_type == "zip":
                await catalog.page(entry.doc_ref, 0)
    rels = [e.rel for e in catalog.entries() if e.rel.startswith("nest.zip")]
    assert rels == [
        "nest.zip",
        "nest.zip\0level2.zip",
        "nest.zip\0level2.zip\0level3.zip",
        "nest.zip\0level2.zip\0level3.zip\0level4.zip",
    ]
    deepest = {e.rel: e for e in catalog.entries()}[rels[-1]]
    page = await catalog.page(deepest.doc_ref, 0)
    (link,) = [e for e in page.elements if e.category is Category.LINK]
    assert str(link.content["url"]).endswith("#level2.zip!/level3.zip!/level4.zip!/level5.zip")
    with pytest.raises(TooLargeError, match="3 deep at most"):
        extract(tmp_path, "\0".join([*rels[-1].split("\0"), "level5.zip"]))
    # A member that is not what its name says fails alone.
    listed = {e.rel: e for e in catalog.entries()}
    bad, ok = listed["broken.zip\0bad.docx"], listed["broken.zip\0ok.docx"]
    await catalog.outline(bad.doc_ref)
    await catalog.outline(ok.doc_ref)
    assert bad.failed
    assert bad.error is not None
    assert bad.error.kind == "corrupt"
    assert ok.current
    assert listed["broken.zip"].current
