"""A docx's comments, with Word's threads: replies nested under the comment they answer.

Word writes every reply as a `w:comment` of its own in `word/comments.xml`, anchored like
the comment it answers; `word/commentsExtended.xml` (Word 2013 on) links them: one
`w15:commentEx` per comment, named by the `w14:paraId` of the comment's last paragraph,
`w15:paraIdParent` naming the comment it answers and `w15:done="1"` when the thread is
resolved. A reply becomes `replies: [{text, author?, date?}]` of the root of its thread (in
the order of comments.xml) and its own reference in the body gives no element; a resolved
thread says `resolved: true`. Without commentsExtended every comment stands on its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dpe_server.extractors.docx.items import PartCtx
from dpe_server.extractors.docx.runs import InlineReader, Notes
from dpe_server.extractors.docx.styles import Styles
from dpe_server.extractors.docx.xml import W14, W15, W, load, load_or_none
from dpe_server.extractors.kit.package import Package
from dpe_server.extractors.kit.threads import as_reply, roots
from dpe_server.model.content import AnnotationContent


@dataclass(slots=True)
class _Links:
    """commentsExtended by paraId: the paraId each answers, and the resolved ones."""

    parents: dict[str, str] = field(default_factory=dict)
    done: set[str] = field(default_factory=set)


def _links(pkg: Package, part: str | None) -> _Links:
    out = _Links()
    root = load_or_none(pkg, part) if part else None
    if root is None:
        return out
    for ex in root.iter(W15 + "commentEx"):
        para = ex.get(W15 + "paraId", "")
        parent = ex.get(W15 + "paraIdParent")
        if parent:
            out.parents[para] = parent
        if ex.get(W15 + "done") in ("1", "true", "on"):
            out.done.add(para)
    return out


def load_comments(
    pkg: Package, part: str, extended: str | None, styles: Styles
) -> tuple[dict[str, AnnotationContent], set[str]]:
    """Comments by id, replies nested; and the ids of the replies (no element of their own)."""
    reader = InlineReader(PartCtx(pkg, part), styles, Notes())
    comments: dict[str, AnnotationContent] = {}
    para_ids: dict[str, str] = {}  # comment id → paraId of its last paragraph
    for comment in load(pkg, part).iterfind(W + "comment"):
        cid = comment.get(W + "id", "")
        text, _ = reader.text_box(comment)
        content: AnnotationContent = {"text": text.strip(), "kind": "comment"}
        if author := comment.get(W + "author", "").strip():
            content["author"] = author
        if date := comment.get(W + "date", ""):
            content["date"] = date
        comments[cid] = content
        ids = [p.get(W14 + "paraId") for p in comment.iter(W + "p")]
        if last := next((i for i in reversed(ids) if i), None):
            para_ids[cid] = last
    links = _links(pkg, extended)
    by_para = {para: cid for cid, para in para_ids.items()}
    answers = {
        cid: by_para[links.parents[para]]
        for cid, para in para_ids.items()
        if links.parents.get(para) in by_para
    }
    threads = roots(answers, comments)
    for cid, root in threads.items():
        comments[root].setdefault("replies", []).append(as_reply(comments[cid]))
    for cid, para in para_ids.items():
        if para in links.done and cid not in threads:
            comments[cid]["resolved"] = True
    return comments, set(threads)
