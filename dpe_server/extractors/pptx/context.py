"""What the slide walker needs around one slide: its relationships, the layout and master it
inherits from, the page being built (under the page limits), and link resolution."""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from lxml import etree

from dpe_server.extractors.base import Limits
from dpe_server.extractors.kit.package import Package, Relationship
from dpe_server.extractors.pptx.text import A, Chain, P, RunLink
from dpe_server.model import summaries
from dpe_server.model.content import LinkContent
from dpe_server.model.tree import JSON, Category, PageBuilder

Point = tuple[int, int]

# The master placeholder a layout placeholder inherits from, by layout type (python-pptx's
# table, after ECMA-376 §19.3.1.36): most content types fall back to the master's body.
MASTER_TYPE = {
    "ctrTitle": "title",
    "title": "title",
    "dt": "dt",
    "ftr": "ftr",
    "sldNum": "sldNum",
    "hdr": "hdr",
}
TITLE_TYPES = frozenset({"title", "ctrTitle"})
_INERT_ACTIONS = ("ppaction://noaction", "ppaction://media", "ppaction://ole")
"""Click actions that go nowhere a reader could follow (play media, activate an object)."""
FOOTER_TYPES = {"dt": "date", "ftr": "footer", "sldNum": "slide_number", "hdr": "header"}


def position(sp: etree._Element) -> Point | None:
    """The top-left offset of a shape (`a:off` of its xfrm), or None when it has none."""
    off = sp.find(f"{P}spPr/{A}xfrm/{A}off")
    if off is None:
        off = sp.find(f"{P}xfrm/{A}off")
    if off is None:
        off = sp.find(f"{P}grpSpPr/{A}xfrm/{A}off")
    if off is None:
        return None
    try:
        return int(off.get("y", "0")), int(off.get("x", "0"))
    except ValueError:
        return None


def placeholder(sp: etree._Element) -> etree._Element | None:
    for path in (f"{P}nvSpPr/{P}nvPr/{P}ph", f"{P}nvPicPr/{P}nvPr/{P}ph"):
        ph = sp.find(path)
        if ph is not None:
            return ph
    return None


@dataclass(frozen=True, slots=True)
class Placeholder:
    type: str
    pos: Point | None
    lst: etree._Element | None


def _placeholders(root: etree._Element) -> tuple[dict[str, Placeholder], dict[str, Placeholder]]:
    by_idx: dict[str, Placeholder] = {}
    by_type: dict[str, Placeholder] = {}
    tree = root.find(f"{P}cSld/{P}spTree")
    if tree is None:
        return by_idx, by_type
    for sp in tree.iter(f"{P}sp"):
        ph = placeholder(sp)
        if ph is None:
            continue
        kind = ph.get("type", "obj")
        lst = sp.find(f"{P}txBody/{A}lstStyle")
        info = Placeholder(kind, position(sp), lst if lst is not None and len(lst) else None)
        by_idx.setdefault(ph.get("idx", "0"), info)
        by_type.setdefault(kind, info)
    return by_idx, by_type


@dataclass(frozen=True, slots=True)
class Master:
    by_type: dict[str, Placeholder]
    styles: dict[str, etree._Element]
    """`titleStyle`, `bodyStyle`, `otherStyle` of `p:txStyles` by short name."""

    @classmethod
    def parse(cls, root: etree._Element | None) -> Master:
        if root is None:
            return cls({}, {})
        _, by_type = _placeholders(root)
        styles = {}
        tx = root.find(f"{P}txStyles")
        if tx is not None:
            for name in ("title", "body", "other"):
                style = tx.find(f"{P}{name}Style")
                if style is not None:
                    styles[name] = style
        return cls(by_type, styles)


@dataclass(frozen=True, slots=True)
class Layout:
    name: str
    by_idx: dict[str, Placeholder]
    by_type: dict[str, Placeholder]
    master: Master

    @classmethod
    def parse(cls, root: etree._Element | None, master: Master) -> Layout:
        if root is None:
            return cls("", {}, {}, master)
        csld = root.find(f"{P}cSld")
        name = "" if csld is None else csld.get("name", "")
        by_idx, by_type = _placeholders(root)
        return cls(name, by_idx, by_type, master)

    def inherit(self, ph: etree._Element) -> tuple[str, Point | None, Chain]:
        """For a slide placeholder: its effective type, inherited position and list styles."""
        kind = ph.get("type", "obj")
        idx = ph.get("idx")
        base = self.by_idx.get(idx) if idx is not None else None
        if base is None:
            base = self.by_type.get(kind)
            if base is None and kind in TITLE_TYPES:
                base = self.by_type.get("title") or self.by_type.get("ctrTitle")
        if base is not None and ph.get("type") is None:
            kind = base.type
        mtype = MASTER_TYPE.get(base.type if base is not None else kind, "body")
        mph = self.master.by_type.get(mtype)
        style_name = {"title": "title", "body": "body"}.get(mtype, "other")
        styles = [x.lst for x in (base, mph) if x is not None and x.lst is not None]
        style = self.master.styles.get(style_name)
        if style is not None:
            styles.append(style)
        pos = next((x.pos for x in (base, mph) if x is not None and x.pos is not None), None)
        return kind, pos, Chain(tuple(styles))


class Sink:
    """A `PageBuilder` under the page limits: past a cap (elements, characters), elements are
    dropped and the page says `truncated`."""

    def __init__(self, page_index: int, limits: Limits) -> None:
        self.builder = PageBuilder(page_index, limits.max_elements_per_page)
        self.limits = limits
        self.chars = 0
        self.chars_truncated = False

    @property
    def truncated(self) -> bool:
        return self.chars_truncated or self.builder.truncated

    def add(
        self,
        category: Category,
        summary: str,
        content: Mapping[str, JSON],
        metadata: Mapping[str, JSON] | None = None,
        chars: int = 0,
    ) -> str | None:
        if self.chars + chars > self.limits.max_chars_per_page:
            self.chars_truncated = True
            return None
        self.chars += chars
        return self.builder.add(category, summary, content, metadata) or None

    def next_id(self, category: Category) -> str:
        return self.builder.next_id(category)


@dataclass(slots=True)
class SlideContext:
    pkg: Package
    part: str
    rels: dict[str, Relationship]
    layout: Layout
    default_style: etree._Element | None
    slide_numbers: Mapping[str, int]
    """Slide part name → page index, for slide-jump links."""
    sink: Sink
    connectors_done: bool = False
    broken_parts: int = 0

    def text_chain(self) -> Chain:
        """List styles of a shape that is not a placeholder (a text box, an auto shape)."""
        return Chain(() if self.default_style is None else (self.default_style,))

    def link(self, rid: str, action: str) -> tuple[str, int | None] | None:
        """A link's url (and the page it jumps to, for slide jumps); None when it goes nowhere."""
        rel = self.rels.get(rid) if rid else None
        if action.startswith("ppaction://hlinksldjump"):
            if rel is None or rel.external:
                return None
            page = self.slide_numbers.get(rel.target)
            return (f"#slide={page + 1}", page) if page is not None else None
        if action.startswith("ppaction://hlinkshowjump"):
            jump = action.partition("jump=")[2]
            return (f"#{jump}", None) if jump else None
        if action.startswith(_INERT_ACTIONS):
            return None
        if rel is not None:
            target = rel.target if rel.external else posixpath.basename(rel.target)
            return (target, None) if target else None
        return (action, None) if action else None


def emit_links(links: Iterable[RunLink], sp: etree._Element, ctx: SlideContext) -> None:
    """Hyperlinks on text runs of a shape, as link elements after the shape's text; adjacent
    runs linking to the same place are one link."""
    found: list[tuple[str, str, int | None]] = []
    for link in links:
        target = ctx.link(link.rid, link.action)
        if target is None:
            continue
        url, page = target
        if link.follows and found and found[-1][1] == url:
            text, _, page = found[-1]
            found[-1] = (text + link.text, url, page)
            continue
        found.append((link.text, url, page))
    for text, url, page in found:
        add_link(ctx, sp, text, (url, page), "text_run")


def add_link(
    ctx: SlideContext, sp: etree._Element, text: str, target: tuple[str, int | None], kind: str
) -> None:
    """A link element of shape `sp`: `target` is (url, slide index or None), as `ctx.link`
    gives it; `kind` says what carries it (`text_run`, `click_action`)."""
    url, page = target
    content: LinkContent = {"text": text, "url": url}
    if page is not None:
        content["target_page"] = page
    ctx.sink.add(
        Category.LINK, summaries.link(text, url), content, shape_meta(sp, kind=kind), len(text)
    )


def shape_ids(sp: etree._Element) -> tuple[str, str]:
    """(id, name) of a shape's `p:cNvPr`."""
    for child in sp:
        if isinstance(child.tag, str) and child.tag.startswith(P + "nv"):
            c = child.find(f"{P}cNvPr")
            if c is not None:
                return c.get("id", ""), c.get("name", "")
    return "", ""


def shape_meta(sp: etree._Element, **extra: JSON) -> dict[str, JSON]:
    sid, name = shape_ids(sp)
    meta: dict[str, JSON] = {}
    if sid.isdigit():
        meta["shape_id"] = int(sid)
    if name:
        meta["shape_name"] = name
    meta.update({k: v for k, v in extra.items() if v is not None})
    return meta


def click_action(sp: etree._Element) -> etree._Element | None:
    for child in sp:
        if isinstance(child.tag, str) and child.tag.startswith(P + "nv"):
            return child.find(f"{P}cNvPr/{A}hlinkClick")
    return None
