"""The HTML of `dpe-server view`: pages written on the server from the payloads the read path
returns (Level 0, 1, 2 and 3 JSON, the search tool's answer), with a little plain JavaScript
(choosing an element, refreshing when the folder changes). No build step, nothing fetched from
the network: the page's style and script are written into it. Every text taken from a document
is escaped."""

from __future__ import annotations

from html import escape
from typing import Any
from urllib.parse import quote

COLOURS = {
    "heading": "#2563eb",
    "text": "#64748b",
    "list": "#0891b2",
    "table": "#16a34a",
    "chart": "#ea580c",
    "image": "#9333ea",
    "formula": "#ca8a04",
    "annotation": "#db2777",
}
"""A category's box colour (the others: `OTHER`)."""
OTHER = "#475569"
PIXELS_PER_POINT = 1.5
"""The page picture's scale (`extractors.pdf.render.SCALE`): boxes are drawn in its pixels."""

STYLE = """
body{font:14px system-ui,sans-serif;margin:0;color:#0f172a}
header{background:#0f172a;color:#fff;padding:8px 16px;display:flex;gap:16px;align-items:center}
header a{color:#fff}main{padding:16px}table{border-collapse:collapse}
td,th{padding:4px 8px;border-bottom:1px solid #e2e8f0;text-align:left;vertical-align:top}
.error{color:#b91c1c}.indexing{color:#a16207}.ok{color:#15803d}
.layout{display:flex;gap:16px;align-items:flex-start}
.page{position:relative;border:1px solid #94a3b8;background:#fff;flex:none}
.page img{position:absolute;left:0;top:0;width:100%;height:100%}
.page.office img{position:static;display:block;width:auto;height:auto}
.note{color:#a16207;max-width:40em}
.box{position:absolute;border:2px solid;box-sizing:border-box;cursor:pointer}
.box.chosen{background:rgba(250,204,21,.35)}
.tree{list-style:none;padding:0;margin:0}.tree li{cursor:pointer;padding:2px 0}
aside{flex:1;min-width:320px}pre{white-space:pre-wrap;background:#f1f5f9;padding:8px}
"""

HEAD_SCRIPT = """
function unDrawn(img){
  fetch(img.src).then(r=>r.text()).then(t=>{
    const p=document.createElement('p');p.className='note';p.textContent=t;
    img.parentNode.replaceWith(p);
  });
}
"""
"""Defined before the page's picture, whose failure to load it handles: the sentence saying
why it has none replaces it."""

SCRIPT = """
function choose(uri){
  document.querySelectorAll('.chosen').forEach(e=>e.classList.remove('chosen'));
  document.querySelectorAll('[data-uri="'+CSS.escape(uri)+'"]').forEach(e=>e.classList.add('chosen'));
  fetch('/element?uri='+encodeURIComponent(uri)).then(r=>r.json()).then(d=>{
    document.getElementById('uri').textContent=d.uri;
    document.getElementById('json').textContent=d.json;
    document.getElementById('markdown').textContent=d.markdown;
  });
}
document.querySelectorAll('[data-uri]').forEach(e=>e.addEventListener('click',()=>choose(e.dataset.uri)));
const wanted=new URLSearchParams(location.search).get('element');
if(wanted){choose(wanted);}
let seen=null;
const at=location.pathname.split('/');
const doc=at[1]==='doc'?at[2]:'';
const changes='/changes'+(doc?'?doc='+doc:'');
function poll(){fetch(changes).then(r=>r.json()).then(d=>{
  if(seen!==null&&d.changes!==seen){location.reload();}seen=d.changes;
}).catch(()=>{}).finally(()=>setTimeout(poll,1000));}
poll();
"""


def page_html(title: str, body: str) -> str:
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{escape(title)} - dpe-server view</title><style>{STYLE}</style>"
        f"<script>{HEAD_SCRIPT}</script></head><body>"
        "<header><a href='/'>Documents</a><form action='/search'>"
        "<input name='q' placeholder='search the documents' size='32'></form></header>"
        f"<main>{body}</main><script>{SCRIPT}</script></body></html>"
    )


def _state(doc: dict[str, Any]) -> str:
    error = doc.get("error")
    if isinstance(error, dict):
        kind, message = escape(str(error.get("kind"))), escape(str(error.get("message")))
        return f"<span class='error'>{kind}: {message}</span>"
    if doc.get("indexing"):
        return "<span class='indexing'>indexing</span>"
    return "<span class='ok'>ok</span>"


def _ocr(page: dict[str, Any]) -> str:
    """A page whose pictures wait to be recognised (`ocr: "pending"`) says so."""
    return " <span class='indexing'>OCR pending</span>" if page.get("ocr") == "pending" else ""


def catalog_html(host: str, catalog: dict[str, Any]) -> str:
    rows = []
    for doc in catalog["documents"]:
        link = f"/doc/{quote(str(doc['doc_ref']))}"
        rows.append(
            f"<tr class='document'><td><a href='{link}'>{escape(str(doc['title']))}</a></td>"
            f"<td>{escape(str(doc['file_type']))}</td><td>{int(doc['page_count'])}</td>"
            f"<td>{_state(doc)}</td><td>{escape(str(doc.get('summary', '')))}</td></tr>"
        )
    head = "<tr><th>title</th><th>type</th><th>pages</th><th>state</th><th>summary</th></tr>"
    count = int(catalog["total_count"])
    return page_html(
        host,
        f"<h1>dpe://{escape(host)}: {count} document{'' if count == 1 else 's'}</h1>"
        f"<table id='documents'>{head}{''.join(rows)}</table>",
    )


def document_html(document: dict[str, Any]) -> str:
    ref = quote(str(document["doc_ref"]))
    items = "".join(
        f"<li><a href='/doc/{ref}/pages/{int(p['page_index'])}'>"
        f"{int(p['page_index'])}: {escape(str(p.get('title', '')))}</a>"
        f" ({int(p.get('element_count', 0))} elements){_ocr(p)}</li>"
        for p in document.get("pages", [])
    )
    return page_html(
        str(document["title"]),
        f"<h1>{escape(str(document['title']))}</h1><p>{_state(document)} "
        f"<code>{escape(str(document['uri']))}</code></p><ol start='0'>{items}</ol>",
    )


def _box(element: dict[str, Any], height: float) -> str:
    box = element.get("metadata", {}).get("bbox")
    if not (isinstance(box, list) and len(box) == 4):
        return ""
    x0, y0, x1, y1 = (float(v) * PIXELS_PER_POINT for v in box)
    top = height * PIXELS_PER_POINT - y1
    category = escape(str(element["category"]))
    colour = COLOURS.get(category, OTHER)
    return (
        f"<div class='box' data-uri='{escape(str(element['uri']))}' data-category='{category}' "
        f"title='{escape(str(element['element_id']))}' "
        f"style='left:{x0:.1f}px;top:{top:.1f}px;width:{x1 - x0:.1f}px;height:{y1 - y0:.1f}px;"
        f"border-color:{colour}'></div>"
    )


def page_view_html(
    document: dict[str, Any],
    page: dict[str, Any],
    elements: list[dict[str, Any]],
    picture: str,
    note: str = "",
) -> str:
    """A page: its picture with every element's box over it (where both are known), its
    elements as a list, and the chosen element's URI, JSON and Markdown beside. `picture`:
    `pdf` (drawn at the page's size in points, the boxes over it), `office` (LibreOffice's
    drawing of it, at its own size: office trees have no boxes) or "" (none: `note` says why).
    """
    width, height = page.get("width"), page.get("height")
    ref, index = quote(str(document["doc_ref"])), int(page["page_index"])
    source = f"/doc/{ref}/pages/{index}/picture"
    drawn = f"<p class='note'>{escape(note)}</p>" if note else ""
    if picture == "office":
        drawn = (
            f"<div class='page office'><img alt='' src='{source}' onerror='unDrawn(this)'></div>"
        )
    elif isinstance(width, int | float) and isinstance(height, int | float):
        w, h = float(width) * PIXELS_PER_POINT, float(height) * PIXELS_PER_POINT
        image = f"<img alt='' src='{source}'>" if picture == "pdf" else ""
        boxes = "".join(_box(e, float(height)) for e in elements)
        drawn += f"<div class='page' style='width:{w:.0f}px;height:{h:.0f}px'>{image}{boxes}</div>"
    tree = "".join(
        f"<li data-uri='{escape(str(e['uri']))}'><b>{escape(str(e['category']))}</b> "
        f"{escape(str(e.get('summary', '')))}</li>"
        for e in elements
    )
    title = f"{document['title']}, page {page['page_index']}"
    return page_html(
        title,
        f"<h1><a href='/doc/{quote(str(document['doc_ref']))}'>{escape(str(document['title']))}"
        f"</a>, page {int(page['page_index'])}{_ocr(page)}</h1><div class='layout'>{drawn}"
        f"<aside><ul class='tree'>{tree}</ul><h2>Element</h2><code id='uri'></code>"
        "<h3>JSON</h3><pre id='json'></pre><h3>Markdown</h3><pre id='markdown'></pre>"
        "</aside></div>",
    )


def search_html(query: str, answer: dict[str, Any] | None, problem: str = "") -> str:
    items = []
    for hit in (answer or {}).get("results", []):
        uri = str(hit["uri"])
        ref = uri.split("/")[3]
        link = f"/doc/{quote(ref)}/pages/{int(hit['page_index'])}?element={quote(uri, safe='')}"
        items.append(
            f"<li class='result'><a href='{link}'>{escape(str(hit['title']))}, page "
            f"{int(hit['page_index'])}</a> ({escape(str(hit['category']))}): "
            f"{escape(str(hit['snippet']))}</li>"
        )
    note = escape(problem or str((answer or {}).get("note", "")))
    total = int((answer or {}).get("total", 0))
    return page_html(
        f"search {query}",
        f"<h1>{total} found for {escape(query)}</h1><p class='note'>{note}</p>"
        f"<ol id='results'>{''.join(items)}</ol>",
    )


def problem_html(status: int, message: str) -> str:
    return page_html(str(status), f"<h1>{status}</h1><p class='error'>{escape(message)}</p>")
