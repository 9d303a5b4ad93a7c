"""The OCR settings (`--ocr`, `--ocr-languages`) and what of them enters the cache key.

`auto` recognises pages that are pictures (a pdf page without a text layer whose images cover
much of it); `force` recognises every pdf page, its text layer ignored (for a broken text
layer); `off` recognises nothing. Languages: the engine's one model reads Chinese and English
(`zh`, `en`); others are refused when the options are read.
"""

from __future__ import annotations

import os
import sys

MODES = ("auto", "off", "force")
LANGUAGES = ("en", "zh")
ENGINE_PACKAGE = "rapidocr-onnxruntime"


def engine_version() -> str:
    """The installed engine's version, or "" when the extra is not installed: the name of the
    first `rapidocr_onnxruntime-VERSION.dist-info` folder on `sys.path`, as the import system
    would find the package. Cheap: one listing per path entry; neither the engine nor
    `importlib.metadata` (~40 ms of imports on every start) is imported."""
    prefix = ENGINE_PACKAGE.replace("-", "_") + "-"
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            low = name.lower()
            if low.startswith(prefix) and low.endswith(".dist-info"):
                return name[len(prefix) : -len(".dist-info")]
    return ""


def parse_languages(text: str) -> tuple[str, ...]:
    """`en,zh` → ("en", "zh"); ValueError naming what is not supported."""
    wanted = tuple(dict.fromkeys(part.strip().lower() for part in text.split(",") if part.strip()))
    unknown = [lang for lang in wanted if lang not in LANGUAGES]
    if unknown or not wanted:
        raise ValueError(
            f"OCR languages {', '.join(unknown) or '(none)'} not supported; "
            f"choose among {', '.join(LANGUAGES)}"
        )
    return wanted


def cache_variant(mode: str, languages: tuple[str, ...]) -> str:
    """What of the OCR settings changes a tree: the mode, the languages and the engine's version
    (installing or upgrading the extra re-extracts the pages it would read)."""
    if mode == "off":
        return "ocr=off"
    return f"ocr={mode}:{','.join(languages)}:{engine_version() or 'none'}"
