"""What of a web page is never shown, and the kinds of its elements: the tags left out
(scripts, styles, templates, embedded objects), hidden elements (`hidden`, `aria-hidden`,
`display: none`, `visibility: hidden`, hidden inputs), the site's furniture (navigation,
the page's banner and footer, cookie banners) and which tags are blocks; `marks` finds the
hidden elements and the furniture of a whole tree at once."""

from __future__ import annotations

import re
from collections.abc import Callable

from lxml import etree

SKIPPED = frozenset(
    {
        "script",
        "style",
        "template",
        "head",
        "title",
        "meta",
        "link",
        "base",
        "iframe",
        "frame",
        "frameset",
        "object",
        "embed",
        "canvas",
        "svg",
        "param",
        "source",
        "track",
        "datalist",
    }
)
"""Tags whose content a reader never sees as the page's text."""

BLOCKS = frozenset(
    {
        "address",
        "article",
        "aside",
        "blockquote",
        "body",
        "center",
        "dd",
        "details",
        "dialog",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hgroup",
        "hr",
        "legend",
        "li",
        "main",
        "menu",
        "nav",
        "ol",
        "p",
        "pre",
        "section",
        "summary",
        "table",
        "tbody",
        "thead",
        "tfoot",
        "tr",
        "td",
        "th",
        "caption",
        "ul",
        "xmp",
        "listing",
        "plaintext",
        "html",
    }
)
"""Tags a browser lays out as blocks: their text is never run into a neighbour's."""

_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden|mso-hide\s*:\s*all", re.I)
_COOKIE = re.compile(r"cookie|consent|gdpr", re.I)
_SECTIONING = frozenset({"article", "section", "main", "aside", "blockquote", "details"})


def tag(el: etree._Element) -> str:
    """The element's lower-case name ("" for a comment or an entity); a prefixed name
    (Word's `o:p`) keeps its prefix: it is no HTML element."""
    name = el.tag
    if not isinstance(name, str):
        return ""
    return name.rsplit("}", 1)[-1].lower()


def text_of(el: etree._Element) -> str:
    """All the text inside `el`, white space collapsed (an attribute-free reading: `alt`s
    and hidden descendants are the callers' concern)."""
    return " ".join("".join(str(t) for t in el.itertext()).split())


def hidden(el: etree._Element) -> bool:
    """Whether the element is never shown (nor its content)."""
    get = el.get
    if get("hidden") is not None or (get("aria-hidden") or "").strip().lower() == "true":
        return True
    style = get("style")
    if style and _HIDDEN_STYLE.search(style):
        return True
    return tag(el) == "input" and (get("type") or "").strip().lower() == "hidden"


def furniture(el: etree._Element, name: str) -> str | None:
    """What site furniture the element is (`navigation`, `banner`, `site_footer`,
    `cookie_banner`), or None for page content."""
    role = (el.get("role") or "").strip().lower()
    if name == "nav" or role == "navigation":
        return "navigation"
    if name in ("header", "footer") or role in ("banner", "contentinfo"):
        if any(tag(a) in _SECTIONING for a in el.iterancestors()):
            return None  # an article's own header or footer is its content
        return "banner" if name == "header" or role == "banner" else "site_footer"
    if name in ("div", "section", "aside", "dialog") and _COOKIE.search(
        f"{el.get('id') or ''} {el.get('class') or ''}"
    ):
        return "cookie_banner"
    return None


HIDDEN = "hidden"
"""The mark of a hidden element (`marks`)."""
WORD_LIST = "word_list"
"""The mark of a paragraph Word saved as a list item (`marks`)."""
_READ_ATTRIBUTES = frozenset({"hidden", "aria-hidden", "style", "role", "type", "id", "class"})
"""The attributes `hidden` and `furniture` read: an element with none of them (nor one of
`_READ_NAMES`) is neither hidden nor furniture."""
_READ_NAMES = frozenset({"nav", "header", "footer"})


def marks(
    root: etree._Element, word_list: Callable[[etree._Element], bool]
) -> dict[etree._Element, str]:
    """The elements of `root`'s tree that are hidden (`HIDDEN`), site furniture (its kind)
    or, by `word_list`, a paragraph Word saved as a list item (`WORD_LIST`), found in one pass
    over the tree, so that a walk asks a dictionary rather than each element's attributes
    (a tree parsed by lxml's HTML parser: its names are lower case)."""
    out: dict[etree._Element, str] = {}
    for el in root.iter():
        keys = el.keys()
        if not (keys and not _READ_ATTRIBUTES.isdisjoint(keys)) and el.tag not in _READ_NAMES:
            continue
        name = tag(el)
        if hidden(el):
            out[el] = HIDDEN
        elif (kind := furniture(el, name)) is not None:
            out[el] = kind
        elif name == "p" and word_list(el):
            out[el] = WORD_LIST
    return out
