"""The OCR settings (`--ocr`, `--ocr-engine`, `--ocr-languages`) and what of them enters the
cache key.

`auto` recognises pages that are pictures (a pdf page without a text layer whose images cover
much of it, a picture file); `force` recognises every pdf page, its text layer ignored (for a
broken text layer); `off` recognises nothing.

Engines: `tesseract` (the `tesseract` command, Debian `tesseract-ocr` and its language packages,
Homebrew `tesseract`), `rapidocr` (the `ocr` extra); `auto` takes Tesseract when its command is
found, else RapidOCR when the extra is installed.

Tesseract's version and languages, in the cache key of a format that may recognise a picture
(`Format.recognises_pictures`), are the command's (`tesseract --version`, `--list-langs`, run
side by side: some 0.05 CPU s and 0.03 s, once a process, when such a key is first made) even
where its library reads the pages (`tess_library`): the library would tell its languages only
from an initialised handle (at least 0.12 CPU s, loading `osd`), dearer in a `dpe-server read`
that recognises nothing. The library is used only when its version is the command's.

Languages are ISO 639-1 codes (`en`, `zh`, `ja`…, `LANGUAGE_CODES`) or Tesseract's own names
(`eng`, `chi_sim`); none given means every language the engine has (Tesseract: those installed,
its script detection choosing per page; RapidOCR: Chinese and English, its one model).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import sys

MODES = ("auto", "off", "force")
ENGINES = ("auto", "tesseract", "rapidocr")
RAPID_LANGUAGES = ("en", "zh")
"""What RapidOCR's one model reads."""
LANGUAGES = RAPID_LANGUAGES
ENGINE_PACKAGE = "rapidocr-onnxruntime"
LANGUAGE_CODES = {
    "en": ("eng",),
    "zh": ("chi_sim", "chi_tra"),
    "zh-hans": ("chi_sim",),
    "zh-hant": ("chi_tra",),
    "ja": ("jpn",),
    "ko": ("kor",),
    "ar": ("ara",),
    "de": ("deu",),
    "fr": ("fra",),
    "es": ("spa",),
    "it": ("ita",),
    "pt": ("por",),
    "nl": ("nld",),
    "ru": ("rus",),
}
"""ISO 639-1 codes → Tesseract's language names."""
_TESSERACT_NAME = re.compile(r"[a-z]{3}(?:_[a-z]+)*")


def engine_version() -> str:
    """The installed RapidOCR's version, or "" when the extra is not installed: the name of the
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


@functools.cache
def tesseract() -> tuple[str, str, tuple[str, ...]]:
    """The `tesseract` command found on PATH: (path, version, installed languages without
    `osd`); ("", "", ()) when there is none (or it does not answer)."""
    import subprocess  # (here: a read of a format that never recognises a picture asks nothing)

    path = shutil.which("tesseract")
    if path is None:
        return "", "", ()
    try:
        version_out, langs_out = _outputs([path, "--version"], [path, "--list-langs"])
        version = version_out.split()[1]
        listed = langs_out.splitlines()[1:]
    except (OSError, IndexError, subprocess.SubprocessError):
        return "", "", ()
    names = tuple(sorted(n.strip() for n in listed if n.strip() and n.strip() != "osd"))
    return path, version, names


def _outputs(*argvs: list[str]) -> list[str]:
    """What each command prints (stdout then stderr: older versions print `--version` on
    stderr), the commands run side by side (a `dpe-server read` of a pdf, an Office file or
    a picture waits for Tesseract's two: one after the other, the second's start-up was 0.03 s
    of its wall time)."""
    import subprocess

    running: list[subprocess.Popen[str]] = []
    try:
        for argv in argvs:
            running.append(
                subprocess.Popen(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            )
        outputs = []
        for proc in running:
            out, err = proc.communicate(timeout=30)
            if proc.returncode:
                raise subprocess.CalledProcessError(proc.returncode, proc.args, out, err)
            outputs.append(out + err)
        return outputs
    finally:
        for proc in running:  # a command not waited for (one failed): stopped, pipes closed
            if proc.poll() is None:
                proc.kill()
            proc.communicate()


def chosen(engine: str) -> str:
    """The engine `--ocr-engine` resolves to here: `tesseract`, `rapidocr`, or "" (none)."""
    if engine in ("auto", "tesseract") and tesseract()[0]:
        return "tesseract"
    if engine in ("auto", "rapidocr") and engine_version():
        return "rapidocr"
    return ""


def engine_name(engine: str) -> str:
    """What a recognised page says read it: `tesseract 5.3.0`, `rapidocr 1.4.4`."""
    name = chosen(engine)
    if name == "tesseract":
        return f"tesseract {tesseract()[1]}"
    return f"rapidocr {engine_version()}" if name else ""


def parse_languages(text: str) -> tuple[str, ...]:
    """`en,zh` → ("en", "zh"); ValueError naming what is not a language code."""
    wanted = tuple(dict.fromkeys(part.strip().lower() for part in text.split(",") if part.strip()))
    unknown = [
        lang
        for lang in wanted
        if lang not in LANGUAGE_CODES and not _TESSERACT_NAME.fullmatch(lang)
    ]
    if unknown or not wanted:
        raise ValueError(
            f"OCR languages {', '.join(unknown) or '(none)'} not understood; give ISO codes "
            f"({', '.join(LANGUAGE_CODES)}) or Tesseract's names (eng, chi_sim)"
        )
    return wanted


def tesseract_languages(languages: tuple[str, ...]) -> tuple[str, ...]:
    """Tesseract's names for `languages` (every installed one when none is given)."""
    if not languages:
        return tesseract()[2]
    names = (n for lang in languages for n in LANGUAGE_CODES.get(lang, (lang,)))
    return tuple(dict.fromkeys(names))


def check_languages(engine: str, languages: tuple[str, ...]) -> str:
    """Why the engine `engine` resolves to cannot read `languages` ("" when it can). Without
    languages, without asking which engine is installed (Tesseract's probe is two processes,
    which every `dpe-server read` ran before its URI's format said whether it needs OCR)."""
    if not languages:
        return ""
    name = chosen(engine)
    if not name:
        return ""
    if name == "rapidocr":
        other = [lang for lang in languages if lang not in RAPID_LANGUAGES]
        if other:
            return (
                f"RapidOCR reads {', '.join(RAPID_LANGUAGES)} only, not {', '.join(other)}; "
                "install Tesseract and its language data (docs/ocr.md)"
            )
        return ""
    installed = tesseract()[2]
    missing = [n for n in tesseract_languages(languages) if n not in installed]
    if missing:
        return (
            f"Tesseract has no data for {', '.join(missing)} (installed: "
            f"{', '.join(installed) or 'none'}); install its package, e.g. Debian's "
            f"tesseract-ocr-{missing[0].replace('_', '-')}"
        )
    return ""


def cache_variant(
    mode: str, languages: tuple[str, ...], engine: str = "auto", keep_location: bool = False
) -> str:
    """What of the settings changes a tree: the OCR mode, the languages, the engine chosen and
    its version (installing or upgrading one re-extracts the pages it would read), and
    whether a photo's location is kept."""
    where = ":keep-location" if keep_location else ""
    if mode == "off":
        return "ocr=off" + where
    name = engine_name(engine) or "none"
    langs = ",".join(languages) if languages else "installed"
    if chosen(engine) == "tesseract":
        langs += "=" + "+".join(tesseract_languages(languages))
    return f"ocr={mode}:{langs}:{name}{where}"
