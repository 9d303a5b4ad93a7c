"""The viewer's pdf export of office files runs LibreOffice as legacy's conversions do: no
network, a profile that follows no link. Documents linking their pictures and sections to a
listener on this host are drawn, and nothing reaches the listener."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator

import pytest

from fixtures.builders import legacy, remote_links
from tests.e2e.harness import Listener, age, listening
from tests.surface.viewer_server import served_viewer

pytestmark = pytest.mark.skipif(
    shutil.which("soffice") is None, reason="LibreOffice (soffice) is not on PATH"
)


@pytest.fixture
def listener() -> Iterator[Listener]:
    with listening() as found:
        yield found


def test_an_export_fetches_nothing_a_document_links(
    tmp_path_factory: pytest.TempPathFactory, listener: Listener
) -> None:
    work = tmp_path_factory.mktemp("linked")
    folder = work / "docs"
    folder.mkdir()
    (folder / "linked.fodt").write_bytes(remote_links.fodt(listener.base + "/fodt"))
    # a true Word 97 .doc with a linked picture and section, saved by LibreOffice (which
    # fetches them as it saves: those requests are the builder's, cleared below)
    source = work / "true-doc.fodt"
    source.write_bytes(remote_links.fodt(listener.base + "/true-doc"))
    assert legacy.converted(source, "doc", folder) is not None
    listener.requests.clear()
    age(folder)
    with served_viewer(tmp_path_factory, folder=folder) as viewer:
        page = viewer.settled()
        refs = sorted(set(re.findall(r"/doc/([a-z0-9-]+)'", page)))
        assert len(refs) == 2, page
        for ref in refs:
            status, body, kind = viewer.get(f"/doc/{ref}/pages/0/picture")
            assert (status, kind) == (200, "image/png"), (ref, body[:300])
    assert listener.requests == []
