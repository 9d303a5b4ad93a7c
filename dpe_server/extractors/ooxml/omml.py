"""Office Math (OMML) as readable linear text, in the spirit of UnicodeMath.

`omml_to_linear(el)` takes an `<m:oMath>` or `<m:oMathPara>` (from a docx paragraph, or from
the `a14:m` of a pptx text run) and returns one string a person can read:

| OMML | linear |
|---|---|
| fraction `m:f` | `a/b`, `(a+b)/(c−d)`; no-bar fraction `(a¦b)` |
| scripts `m:sSup` `m:sSub` `m:sSubSup` `m:sPre` | `x^2`, `x_i`, `x_i^(n+1)`, `_(i)^(n)x` |
| radical `m:rad` | `√(x)`, `∛(x)`, `√(n&x)` |
| n-ary `m:nary` | `∑_(i=1)^n x_i` (the operator defaults to `∫` as in the schema) |
| delimiter `m:d` | `(a, b)` with its begin/end/separator characters |
| matrix `m:m` | `[a, b; c, d]`, or `(a, b; c, d)` when it is a delimiter's only content |
| function `m:func` | `sin x`, `sin(x+y)`, `lim_(n→∞) a_n` |
| accent `m:acc`, bar `m:bar`, group `m:groupChr` | `x̂`, `x̅`, `⏟(a+b)` |
| limits `m:limLow` `m:limUpp` | `lim_(n→∞)`, `max^(k)` |
| equation array `m:eqArr` | rows joined by `; ` |
| box, border box, phantom, unknown | their children, in order |

Operands are wrapped in parentheses only when they are not a single token, so simple
expressions stay short (`1/2`, `x_i`) and compound ones stay unambiguous (`(x^2)/2`).
Several equations of one `m:oMathPara` are joined by a newline.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from lxml import etree

from dpe_server.extractors.kit.package import NS
from dpe_server.extractors.kit.xml import local

_M = f"{{{NS['m']}}}"
_SKIPPED = {"", "del", "moveFrom"}  # comments, and text a tracked change deleted
_ATOM = re.compile(r"[\w.′″∞]+|.")
_OPEN_CLOSE = {"(": ")", "[": "]", "{": "}", "⟨": "⟩", "|": "|", "‖": "‖", "⌊": "⌋", "⌈": "⌉"}


def omml_to_linear(el: etree._Element) -> str:
    """An `<m:oMath>` or `<m:oMathPara>` (or any OMML element) as linear text.

    Nesting is bounded by the XML parser (256 levels); should rendering still run out of
    stack, the plain text of the runs is returned instead.
    """
    try:
        if local(el) == "oMathPara":
            maths = [_render(child) for child in el if local(child) == "oMath"]
            return "\n".join(m.strip() for m in maths if m.strip())
        return _render(el).strip()
    except RecursionError:
        return "".join(t.text or "" for t in el.iter(_M + "t")).strip()


def _child(el: etree._Element, name: str) -> etree._Element | None:
    return el.find(_M + name)


def _prop(el: etree._Element, pr: str, name: str) -> str | None:
    """The `m:val` of `<m:{pr}><m:{name} m:val=.../>` (None when the property is absent)."""
    node = el.find(f"{_M}{pr}/{_M}{name}")
    if node is None:
        return None
    val = node.get(_M + "val")
    return "" if val is None else val


def _flag(el: etree._Element, pr: str, name: str) -> bool:
    """An OMML on/off property: present without a value means on."""
    val = _prop(el, pr, name)
    return val is not None and val.lower() not in ("0", "off", "false")


def _sub(el: etree._Element, name: str) -> str:
    node = _child(el, name)
    return "" if node is None else _render(node).strip()


def _is_atom(text: str) -> bool:
    if _ATOM.fullmatch(text):
        return True
    return _wrapped(text)


def _wrapped(text: str) -> bool:
    """True when `text` is one bracketed group, such as `(a+b)` (not `(a)(b)`)."""
    if len(text) < 2 or text[0] not in _OPEN_CLOSE or text[-1] != _OPEN_CLOSE[text[0]]:
        return False
    if text[0] in "|‖":  # absolute values and norms: |a| is one group, |a|+|b| is not
        return text.count(text[0]) == 2
    depth = 0
    for i, ch in enumerate(text):
        if ch in "([{⟨":
            depth += 1
        elif ch in ")]}⟩":
            depth -= 1
            if depth == 0 and i != len(text) - 1:
                return False
    return depth == 0


def _group(text: str) -> str:
    """`text` as an operand: as is when it is one token, else in parentheses."""
    return text if text and _is_atom(text) else f"({text})"


def _scripts(sub: str, sup: str) -> str:
    out = f"_{_group(sub)}" if sub else ""
    return out + (f"^{_group(sup)}" if sup else "")


def _render(el: etree._Element) -> str:
    name = local(el)
    if name.endswith("Pr") or name in _SKIPPED:
        return ""
    handler = _HANDLERS.get(name) if str(el.tag).startswith(_M) else None
    if handler is not None:
        return handler(el)
    if name == "t":
        return el.text or ""
    return _concat(el)


_SPACED_BEFORE = {"func"}
_SPACED_AFTER = {"f", "nary", "func"}


def _concat(el: etree._Element) -> str:
    """The children's text in order, with a space where gluing would read as one token
    (`a_n cos x`, not `a_ncos x`; `1/z dz`, not `1/zdz`)."""
    out = ""
    prev = ""
    for child in el:
        piece = _render(child)
        if not piece:
            continue
        name = local(child)
        if (
            out
            and not out[-1].isspace()
            and (name in _SPACED_BEFORE or prev in _SPACED_AFTER)
            and (out[-1].isalnum() or out[-1] in ")]}")
            and (piece[0].isalnum() or name in _SPACED_BEFORE)
        ):
            out += " "
        out += piece
        prev = name
    return out


def _run(el: etree._Element) -> str:
    return "".join(t.text or "" for t in el.iter(_M + "t"))


def _fraction(el: etree._Element) -> str:
    num, den = _sub(el, "num"), _sub(el, "den")
    if _prop(el, "fPr", "type") == "noBar":
        parent = el.getparent()
        grand = None if parent is None else parent.getparent()
        bracketed = (
            parent is not None and grand is not None and local(parent) + local(grand) == "ed"
        )
        return f"{num}¦{den}" if bracketed else f"({num}¦{den})"
    return f"{_group(num)}/{_group(den)}"


def _base(el: etree._Element) -> str:
    base = _sub(el, "e")
    return base if _is_atom(base) or not base else f"({base})"


def _ssup(el: etree._Element) -> str:
    return _base(el) + _scripts("", _sub(el, "sup"))


def _ssub(el: etree._Element) -> str:
    return _base(el) + _scripts(_sub(el, "sub"), "")


def _ssubsup(el: etree._Element) -> str:
    return _base(el) + _scripts(_sub(el, "sub"), _sub(el, "sup"))


def _spre(el: etree._Element) -> str:
    return _scripts(_sub(el, "sub"), _sub(el, "sup")) + _base(el)


def _radical(el: etree._Element) -> str:
    body = _sub(el, "e")
    deg = "" if _flag(el, "radPr", "degHide") else _sub(el, "deg")
    if deg == "3":
        return f"∛({body})"
    if deg == "4":
        return f"∜({body})"
    return f"√({deg}&{body})" if deg else f"√({body})"


def _nary(el: etree._Element) -> str:
    op = _prop(el, "naryPr", "chr") or "∫"
    sub = "" if _flag(el, "naryPr", "subHide") else _sub(el, "sub")
    sup = "" if _flag(el, "naryPr", "supHide") else _sub(el, "sup")
    body = _sub(el, "e")
    head = op + _scripts(sub, sup)
    return f"{head} {body}".rstrip() if body else head


def _delimiter(el: etree._Element) -> str:
    beg = _prop(el, "dPr", "begChr")
    end = _prop(el, "dPr", "endChr")
    sep = _prop(el, "dPr", "sepChr")
    beg = "(" if beg is None else beg
    end = ")" if end is None else end
    sep = "|" if sep is None else sep
    parts = [child for child in el if local(child) == "e"]
    if len(parts) == 1:
        only = [c for c in parts[0] if local(c) and not local(c).endswith("Pr")]
        if len(only) == 1 and local(only[0]) == "m":
            return beg + _matrix_rows(only[0]) + end
    joiner = ", " if sep == "," else sep
    return beg + joiner.join(_render(p).strip() for p in parts) + end


def _matrix_rows(el: etree._Element) -> str:
    rows = []
    for row in el:
        if local(row) == "mr":
            rows.append(", ".join(_render(c).strip() for c in row if local(c) == "e"))
    return "; ".join(rows)


def _matrix(el: etree._Element) -> str:
    return f"[{_matrix_rows(el)}]"


def _function(el: etree._Element) -> str:
    name = _sub(el, "fName")
    arg = _sub(el, "e")
    if not arg:
        return name
    if _wrapped(arg):
        return name + arg
    return f"{name} {arg}" if _is_atom(arg) else f"{name}({arg})"


def _accent(el: etree._Element) -> str:
    mark = _prop(el, "accPr", "chr")
    mark = "\u0302" if mark is None else mark
    base = _sub(el, "e")
    if len(base) == 1 or not mark:
        return base + mark
    return f"({base}){mark}"


def _bar(el: etree._Element) -> str:
    base = _sub(el, "e")
    top = _prop(el, "barPr", "pos") == "top"
    if len(base) == 1:
        return base + ("\u0305" if top else "\u0332")
    return ("¯" if top else "▁") + f"({base})"


def _group_chr(el: etree._Element) -> str:
    mark = _prop(el, "groupChrPr", "chr") or "⏟"
    return f"{mark}({_sub(el, 'e')})"


def _lim_low(el: etree._Element) -> str:
    return _sub(el, "e") + _scripts(_sub(el, "lim"), "")


def _lim_upp(el: etree._Element) -> str:
    return _sub(el, "e") + _scripts("", _sub(el, "lim"))


def _eq_array(el: etree._Element) -> str:
    rows = [_render(c).strip() for c in el if local(c) == "e"]
    return "; ".join(r for r in rows if r)


def _phantom(el: etree._Element) -> str:
    show = _prop(el, "phantPr", "show")
    if show is not None and show.lower() in ("0", "off", "false"):
        return ""
    return _sub(el, "e")


_HANDLERS: dict[str, Callable[[etree._Element], str]] = {
    "r": _run,
    "f": _fraction,
    "sSup": _ssup,
    "sSub": _ssub,
    "sSubSup": _ssubsup,
    "sPre": _spre,
    "rad": _radical,
    "nary": _nary,
    "d": _delimiter,
    "m": _matrix,
    "func": _function,
    "acc": _accent,
    "bar": _bar,
    "groupChr": _group_chr,
    "limLow": _lim_low,
    "limUpp": _lim_upp,
    "eqArr": _eq_array,
    "phant": _phantom,
}
