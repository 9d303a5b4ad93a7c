"""The web page extractor (.html, .htm, .xhtml, .mhtml): the page's body walked into blocks
(`walk`), cut into pages at its top-level headings (the highest level it uses: `<h1>`, else
`<h2>`...), else at its top-level `<section>`s and `<article>`s, a page over 200 blocks or
60,000 characters continuing as `{title} (cont. N)` (`kit.pages`, as docx and odt). Leading
site furniture (a banner, the navigation) opens the first page rather than making one.

`read` is what Markdown is read through too (rendered to HTML first), so both share their
pages, elements and limits."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import BinaryIO

from lxml import etree

from dpe_server.extractors.base import Limits
from dpe_server.extractors.gcpause import collector_paused
from dpe_server.extractors.html import FORMAT
from dpe_server.extractors.html.source import Source, load
from dpe_server.extractors.html.visible import text_of
from dpe_server.extractors.html.walk import Out, Walker, classify, numbered
from dpe_server.extractors.kit.beside import with_files
from dpe_server.extractors.kit.pages import Block, PagePlan, plan_pages
from dpe_server.extractors.kit.tables import emit_table
from dpe_server.extractors.kit.whole import whole_extractor
from dpe_server.model.errors import CorruptError
from dpe_server.model.tree import JSON, Category, Document, Page, PageBuilder, Properties, one_line

_TITLE_META = ("og:title", "twitter:title", "dc.title")
_SUMMARY_META = ("description", "og:description", "twitter:description", "dc.description")


def _meta(root: etree._Element) -> dict[str, str]:
    """The page's `<meta name|property=... content=...>`, names in lower case."""
    out: dict[str, str] = {}
    for el in root.iter("meta"):
        name = (el.get("name") or el.get("property") or "").strip().lower()
        content = " ".join((el.get("content") or "").split())
        if name and content:
            out.setdefault(name, content)
    return out


def head_title(root: etree._Element) -> str:
    """The title the page gives itself: `<title>`, else `og:title` (or Twitter's, Dublin
    Core's); "" when it gives none."""
    meta = _meta(root)
    title = next((text_of(t) for t in root.iter("title")), "")
    return title or next((meta[k] for k in _TITLE_META if k in meta), "")


def properties(root: etree._Element, titles: Sequence[str], encoding: str) -> Properties:
    """Title from `<title>`, `og:title`, else the first `<h1>`; keywords and summary from
    `<meta>`; the language, author and encoding as extras."""
    title = head_title(root)
    meta = _meta(root)
    if not title:
        h1 = next(iter(root.iter("h1")), None)
        title = "" if h1 is None else text_of(h1)
    keywords = tuple(k.strip() for k in meta.get("keywords", "").split(",") if k.strip())
    summary = next((meta[k] for k in _SUMMARY_META if k in meta), None)
    extra: dict[str, JSON] = {"encoding": encoding}
    language = root.get("lang") or root.get("{http://www.w3.org/XML/1998/namespace}lang")
    if language:
        extra["language"] = language.strip()
    for key in ("author", "generator"):
        if key in meta:
            extra[key] = meta[key]
    return Properties(
        page_count=len(titles),
        title=one_line(title) or None,
        keywords=keywords,
        summary=one_line(summary) if summary else None,
        page_titles=tuple(titles),
        extra=extra,
    )


def _blocks(outs: list[Out], body: etree._Element, whole: bool) -> list[Block]:
    """The page plan's blocks; `whole`: no heading nor section starts a page."""
    headed = whole or any(o.level is not None for o in outs)
    blocks = []
    for i, out in enumerate(outs):
        ends = not headed and i + 1 < len(outs) and outs[i + 1].section != out.section
        level = None if whole else out.level
        blocks.append(
            Block(body, level=level, text=out.text, size=len(out.text), ends_section=ends)
        )
    return blocks


def _furniture_first(plans: list[PagePlan], outs: Mapping[int, Out]) -> list[PagePlan]:
    """The first page joined to the next when it holds only site furniture."""
    if len(plans) < 2 or plans[0].continuation != 1 or plans[1].continuation != 1:
        return plans
    if not all(outs[id(b)].category is Category.HEADER for b in plans[0].blocks):
        return plans
    joined = PagePlan(0, plans[1].title, plans[0].blocks + plans[1].blocks, 0)
    rest = [PagePlan(p.index - 1, p.title, p.blocks, p.section, p.continuation) for p in plans[2:]]
    return [joined, *rest]


def _page(plan: PagePlan, outs: Mapping[int, Out], limits: Limits, title: str, first: int) -> Page:
    builder = PageBuilder(first + plan.index, limits.max_elements_per_page)
    for block in plan.blocks:
        out = outs[id(block)]
        items = out.items  # (read, not changed)
        if out.table is not None:
            items = emit_table(builder, out.table, {}) + items
        elif out.category is not None:
            builder.put(out.category, out.summary, out.content, out.metadata)
        for item in items:  # (summaries one line, contents made for it: `Out`, `media`)
            builder.put(item.category, item.summary, item.content, item.metadata)
    return builder.build(title)


def read(source: Source, limits: Limits, title: str = "", first: int = 0) -> Document:
    """The document of a page already parsed (web pages, and Markdown rendered to HTML).

    With a `title` (an e-book's chapter), the page is one page titled so (and its
    continuations), its pages numbered from `first`, and its properties only its page count,
    titles and encoding: the book's are the document's (`epub.extract` reads a chapter's pages
    and metadata only), so a chapter's `<title>` and `<meta>` are not read."""
    root = source.root
    body = next(iter(root.iter("body")), root)
    walker = Walker(numbered(root), source.parts, classify(root))
    walker.walk(body)
    walker.finish()
    blocks = _blocks(walker.blocks, body, whole=bool(title))
    outs = {id(b): o for b, o in zip(blocks, walker.blocks, strict=True)}
    plans = _furniture_first(plan_pages(blocks), outs)
    cut = len(plans) > limits.max_pages
    plans = plans[: limits.max_pages]
    pages = []
    own = one_line(title or head_title(root))
    for plan in plans:
        name = plan.title
        if own and not any(b.level for b in plan.blocks):
            # a page before any heading: the title the page gives itself
            name = own if plan.index == 0 else name.replace("Section 1", own, 1)
        pages.append(_page(plan, outs, limits, name, first))
    titles = tuple(p.title for p in pages)
    if title:
        props = Properties(len(pages), page_titles=titles, extra={"encoding": source.encoding})
    else:
        props = properties(root, titles, source.encoding)
    cut = cut or any(p.metadata.get("truncated") for p in pages)
    return Document(props, tuple(pages), {"truncated": True} if cut else {})


def _read(f: BinaryIO, limits: Limits) -> Document:
    """The page's tree, the cyclic garbage collector paused meanwhile (`gcpause`): the walk
    builds a few objects per element (its blocks, their contents, the elements) and none of
    them is in a reference cycle, yet the collector walked them all, again and again (a fifth
    of the 5 MB page's extraction, three full collections of 0.1 s each)."""
    try:
        with collector_paused():
            source = load(f, limits)
            doc = read(source, limits)
    except RecursionError:
        raise CorruptError("The page is nested too deeply to read.") from None
    except (etree.LxmlError, ValueError) as exc:
        raise CorruptError(f"The page cannot be read ({type(exc).__name__}: {exc}).") from None
    # a saved page's pictures are in the folder beside it (`page_files/`); a web archive's are
    # its own parts, and a relative name it does not hold is no file of the folder
    return doc if source.archive else with_files(doc)


EXTRACTOR = whole_extractor(FORMAT, _read)
