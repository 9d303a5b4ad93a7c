"""Tesseract loaded in the process, through its own C interface (`tesseract/capi.h` of
`libtesseract.so.5`, Homebrew's `libtesseract.5.dylib`), called with `ctypes` from the standard
library: no binding to install, the engine's own interface.

`run(args, grey, timeout)` answers the command's arguments (`-l`, `--psm`, `--dpi`, `-c`
settings, the `tsv` output) with what the command would print for the same pixels: its TSV
(header row included) or, for `--psm 0`, its orientation and script detection's lines. So the
one parser (`tesseract.words`) reads both, and where the library cannot be loaded (not found,
not Tesseract 5, another version than the command's, or OpenMP already started with more than
one thread) `run` gives None and the command runs (`tess_command`).

A handle is initialised once per language set and `-c` settings (Tesseract's start, some
0.15 CPU s for English, is paid once a process, not once a page) and kept for the next page;
`MAX_HANDLES` at most stay (the least recently used ended first; some 20 MB of memory for
English, 50 for Simplified Chinese, 10 for Arabic, 30 for `osd`). A handle reads one page at a
time: a thread takes it from the idle ones and gives it back. A recognition stops at `timeout`
(Tesseract's monitor); the worker's own deadline still kills a worker stuck past it.

OpenMP (Debian's build links libgomp) is limited to one thread as the command was
(`OMP_THREAD_LIMIT=1`, read by libgomp when it is loaded, set for the load alone), and
Tesseract's messages go to `os.devnull` (`debug_file`), as the command's standard error was
kept out of the log; so are Leptonica's (its picture library's), written to standard error by
the library itself."""

from __future__ import annotations

import atexit
import collections
import ctypes
import ctypes.util
import functools
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from dpe_server.extractors.ocr import settings

NAMES = ("libtesseract.so.5", "libtesseract.5.dylib")
LEPTONICA = ("liblept.so.5", "libleptonica.so.6", "liblept.5.dylib", "libleptonica.6.dylib")
"""Leptonica's library as Tesseract 5's builds link it (Debian 12, later Debian, Homebrew)."""
SEVERITY_NONE = 6
"""Leptonica's `L_SEVERITY_NONE`: no message."""
MAX_HANDLES = 4
"""Handles kept in a process: `osd` and three language sets (a page's Latin reading, and its
script's: Chinese, Arabic)."""
TSV_HEADER = (
    "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\t"
    "left\ttop\twidth\theight\tconf\ttext\n"
)
"""The first row of the command's TSV (its renderer writes it; the library's text has none)."""
OEM_DEFAULT = 3
PSM_OSD_ONLY = 0

_Key = tuple[str, tuple[tuple[str, str], ...]]


@dataclass(slots=True)
class Pool:
    """The handles of this process."""

    idle: collections.OrderedDict[_Key, list[int]] = field(default_factory=collections.OrderedDict)
    """Handles not in use, by language set and settings, the most recently used last."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    initialisations: int = 0
    """Handles initialised in this process (Tesseract's starts)."""


POOL = Pool()


@dataclass(frozen=True, slots=True)
class Call:
    """The command's arguments, as the library takes them."""

    languages: str
    psm: int
    dpi: int
    variables: tuple[tuple[str, str], ...]


def run(args: list[str], grey: Any, timeout: float) -> str | None:
    """What the command prints for `args` on the picture (an 8-bit grey PIL image); None when
    the library is not loaded, or `args` ask what it is not used for, or the picture is not
    8-bit grey. `RuntimeError` when
    Tesseract fails (a language not installed, past `timeout`, no orientation found)."""
    lib = library()
    call = parse(args)
    if lib is None or call is None or grey.mode != "L":  # 8-bit grey bytes alone
        return None
    key = (call.languages, call.variables)
    handle = _take(lib, key)
    try:
        lib.TessBaseAPISetPageSegMode(handle, call.psm)
        lib.TessBaseAPISetVariable(handle, b"user_defined_dpi", str(call.dpi).encode())
        data = grey.tobytes()
        lib.TessBaseAPISetImage(handle, data, grey.width, grey.height, 1, grey.width)
        lib.TessBaseAPISetSourceResolution(handle, call.dpi)
        if call.psm == PSM_OSD_ONLY:
            return _orientation(lib, handle)
        return TSV_HEADER + _recognised(lib, handle, timeout)
    finally:
        lib.TessBaseAPIClear(handle)
        _give(lib, key, handle)


def parse(args: list[str]) -> Call | None:
    """`-l eng --psm 3 --dpi 200 -c name=value … tsv` → a `Call` (None for any other
    argument, or a reading not asked as TSV: left to the command)."""
    languages, psm, dpi, tsv = "eng", 3, 0, False
    variables: list[tuple[str, str]] = []
    words = iter(args)
    for word in words:
        if word in ("-l", "--psm", "--dpi", "-c"):
            value = next(words, None)
            if value is None:
                return None
            if word == "-l":
                languages = value
            elif word == "-c" and "=" in value:
                name, _, setting = value.partition("=")
                variables.append((name, setting))
            elif word in ("--psm", "--dpi") and value.isdigit():
                psm, dpi = (int(value), dpi) if word == "--psm" else (psm, int(value))
            else:
                return None
        elif word == "tsv":
            tsv = True
        else:
            return None
    if psm != PSM_OSD_ONLY and not tsv:
        return None
    return Call(languages, psm, dpi, tuple(variables))


def _recognised(lib: Any, handle: int, timeout: float) -> str:
    monitor = lib.TessMonitorCreate()
    try:
        lib.TessMonitorSetDeadlineMSecs(monitor, max(1, round(timeout * 1000)))
        if lib.TessBaseAPIRecognize(handle, monitor) != 0:
            raise RuntimeError(f"tesseract failed or ran past {timeout:g} s")
    finally:
        lib.TessMonitorDelete(monitor)
    text = lib.TessBaseAPIGetTsvText(handle, 0)
    if not text:
        return ""
    try:
        return ctypes.string_at(text).decode("utf-8", "replace")
    finally:
        lib.TessDeleteText(text)


def _orientation(lib: Any, handle: int) -> str:
    """The command's `--psm 0` lines (`TessBaseAPI::GetOsdText`): `Rotate` is the clockwise
    turn that stands the page upright, the inverse of the orientation found."""
    degrees, confidence = ctypes.c_int(), ctypes.c_float()
    script, script_confidence = ctypes.c_char_p(), ctypes.c_float()
    found = lib.TessBaseAPIDetectOrientationScript(
        handle,
        ctypes.byref(degrees),
        ctypes.byref(confidence),
        ctypes.byref(script),
        ctypes.byref(script_confidence),
    )
    if not found:  # the command: "Too few characters. Skipping this page", exit status 1
        raise RuntimeError("tesseract found no orientation (too few characters)")
    name = (script.value or b"").decode("ascii", "replace")  # Tesseract's own string: not freed
    return (
        f"Page number: 0\nOrientation in degrees: {degrees.value}\n"
        f"Rotate: {(360 - degrees.value) % 360}\n"
        f"Orientation confidence: {confidence.value:.2f}\nScript: {name}\n"
        f"Script confidence: {script_confidence.value:.2f}\n"
    )


def _take(lib: Any, key: _Key) -> int:
    """An idle handle for `key`, or a new one initialised (`RuntimeError` when Tesseract
    cannot load the languages)."""
    with POOL.lock:
        handles = POOL.idle.get(key)
        if handles:
            handle = handles.pop()
            if not handles:
                del POOL.idle[key]
            return handle
    handle = lib.TessBaseAPICreate()
    settings_ = (*key[1], ("debug_file", os.devnull))
    names = (ctypes.c_char_p * len(settings_))(*(n.encode() for n, _ in settings_))
    values = (ctypes.c_char_p * len(settings_))(*(v.encode() for _, v in settings_))
    failed = lib.TessBaseAPIInit4(
        handle, None, key[0].encode(), OEM_DEFAULT, None, 0, names, values, len(settings_), 0
    )
    if failed:
        lib.TessBaseAPIDelete(handle)
        raise RuntimeError(f"tesseract could not load the languages {key[0]}")
    with POOL.lock:
        POOL.initialisations += 1
    return int(handle)


def _give(lib: Any, key: _Key, handle: int) -> None:
    """Keep the handle for the next page; end the least recently used past `MAX_HANDLES`."""
    ended: list[int] = []
    with POOL.lock:
        POOL.idle.setdefault(key, []).append(handle)
        POOL.idle.move_to_end(key)
        while sum(len(h) for h in POOL.idle.values()) > MAX_HANDLES:
            oldest = next(iter(POOL.idle))
            ended.append(POOL.idle[oldest].pop(0))
            if not POOL.idle[oldest]:
                del POOL.idle[oldest]
    for old in ended:
        _end(lib, old)


def _end(lib: Any, handle: int) -> None:
    lib.TessBaseAPIEnd(handle)
    lib.TessBaseAPIDelete(handle)


def kept() -> int:
    """Handles kept idle in this process."""
    with POOL.lock:
        return sum(len(h) for h in POOL.idle.values())


def _end_all() -> None:
    lib = library() if library.cache_info().currsize else None
    with POOL.lock:
        handles = [h for hs in POOL.idle.values() for h in hs]
        POOL.idle.clear()
    if lib is not None:
        for handle in handles:
            _end(lib, handle)


def _forget() -> None:
    """In a forked child: the parent's handles are its parent's (another thread may have been
    reading with one); the child starts its own."""
    POOL.lock = threading.Lock()
    POOL.idle.clear()


@functools.cache
def library() -> Any | None:
    """Tesseract's library, its functions typed; None where it cannot be used (see the
    module)."""
    version = settings.tesseract()[1]
    if not version.startswith("5.") or (
        _gomp_loaded() and os.environ.get("OMP_THREAD_LIMIT") != "1"
    ):
        return None
    lib = _load()
    if lib is None:
        return None
    try:
        _declare(lib)
    except AttributeError:  # a build without a function used here (legacy engine disabled)
        return None
    if lib.TessVersion().decode("ascii", "replace") != version:
        return None  # another installation than the command's: its words could differ
    _quiet_leptonica()
    atexit.register(_end_all)
    os.register_at_fork(after_in_child=_forget)
    return lib


def _quiet_leptonica() -> None:
    """Leptonica, Tesseract's picture library, writes its warnings (`Error in
    pixScanForForeground: invalid box` on a strip with no ink) to the process's standard error
    itself, not through `debug_file`: the copy Tesseract loaded (`RTLD_NOLOAD`: never another)
    is told to write none, as the command's standard error was dropped."""
    for name in LEPTONICA:
        try:
            lept = ctypes.CDLL(name, mode=os.RTLD_NOLOAD)
        except OSError:
            continue
        lept.setMsgSeverity.argtypes = [ctypes.c_int]
        lept.setMsgSeverity.restype = ctypes.c_int
        lept.setMsgSeverity(SEVERITY_NONE)
        return


def _load() -> Any | None:
    before = os.environ.get("OMP_THREAD_LIMIT")
    os.environ["OMP_THREAD_LIMIT"] = "1"  # libgomp reads it as it is loaded
    try:
        for name in _candidates():
            try:
                return ctypes.CDLL(name)
            except OSError:
                continue
        return None
    finally:
        if before is None:
            del os.environ["OMP_THREAD_LIMIT"]
        else:
            os.environ["OMP_THREAD_LIMIT"] = before


def _candidates() -> Iterator[str]:
    yield from NAMES
    found = ctypes.util.find_library("tesseract")
    if found:
        yield found


def _gomp_loaded() -> bool:
    """Whether libgomp is in the process already (its thread limit read without us)."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            return any("libgomp" in line for line in maps)
    except OSError:
        return False


def _declare(lib: Any) -> None:
    """The C interface's signatures (`capi.h`, Tesseract 5)."""
    p, i, s = ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p
    strings = ctypes.POINTER(ctypes.c_char_p)
    signatures: dict[str, tuple[Any, list[Any]]] = {
        "TessVersion": (s, []),
        "TessBaseAPICreate": (p, []),
        "TessBaseAPIInit4": (i, [p, s, s, i, strings, i, strings, strings, ctypes.c_size_t, i]),
        "TessBaseAPISetPageSegMode": (None, [p, i]),
        "TessBaseAPISetVariable": (i, [p, s, s]),
        "TessBaseAPISetImage": (None, [p, s, i, i, i, i]),
        "TessBaseAPISetSourceResolution": (None, [p, i]),
        "TessBaseAPIRecognize": (i, [p, p]),
        "TessBaseAPIGetTsvText": (p, [p, i]),
        "TessDeleteText": (None, [p]),
        "TessBaseAPIDetectOrientationScript": (
            i,
            [
                p,
                ctypes.POINTER(i),
                ctypes.POINTER(ctypes.c_float),
                strings,
                ctypes.POINTER(ctypes.c_float),
            ],
        ),
        "TessBaseAPIClear": (None, [p]),
        "TessBaseAPIEnd": (None, [p]),
        "TessBaseAPIDelete": (None, [p]),
        "TessMonitorCreate": (p, []),
        "TessMonitorSetDeadlineMSecs": (None, [p, i]),
        "TessMonitorDelete": (None, [p]),
    }
    for name, (restype, argtypes) in signatures.items():
        function = getattr(lib, name)
        function.restype = restype
        function.argtypes = argtypes
