"""LibreOffice run headless on a file's bytes, in a private temporary folder: what legacy's
conversions to OOXML and the viewer's pdf exports of office files (`export_pdf`) share.

- the bytes are written to a fresh temporary folder (never beside the original: the watched
  folder is only read), with `HOME` inside it; the folder is removed afterwards;
- LibreOffice runs with a private profile (`-env:UserInstallation`), one per process, made on
  its first run and kept for the next ones (a new profile costs about 2 s more), so runs share
  nothing with a user's LibreOffice or with another worker; runs of one process take turns on
  it;
- `soffice.bin` is run directly when it sits beside `soffice` (the launcher script forks it),
  in its own session, in a network namespace of its own where the platform allows it, with
  a profile that follows no link (`sandbox`), and with `PR_SET_PDEATHSIG` so it dies with the
  worker that started it (a worker killed at its deadline leaves no LibreOffice behind); a
  first run on a new profile exits 81 (restart) and is run once more;
- it has its own deadline (`timeout`), under the worker's: past it the whole process group is
  killed and the read fails with `timeout`;
- a worker killed mid-run cannot remove its folder: each run first removes the folders of
  processes that no longer exist (`sweep`; the folder's name carries its pid).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import threading
from pathlib import Path

from dpe_server.extractors.kit.sandbox import child_setup, write_profile_settings
from dpe_server.model.errors import (
    CorruptError,
    ExtractionError,
    ExtractionTimeout,
    TooLargeError,
    UnsupportedError,
)

SOFFICE = "soffice"
_RESTART = 81
MAX_OUTPUT = 256 * 1024 * 1024
"""Bytes of a converted file at most."""

PDF_EXPORTS = {
    "section": "writer_pdf_Export",
    "slide": 'impress_pdf_Export:{"ExportHiddenSlides":{"type":"boolean","value":"true"}}',
    "sheet": 'calc_pdf_Export:{"SinglePageSheets":{"type":"boolean","value":"true"}}',
}
"""The pdf export of a format, by what its page is: a text's sections as its printed pages,
a deck's slides one a pdf page, hidden ones too (the tree has them, `hidden: true`), and a
sheet on one pdf page as large as the sheet (`SinglePageSheets`, LibreOffice 6.4 and later),
so that sheet N is the Nth pdf page among the sheets shown (LibreOffice exports no hidden
sheet). The options are LibreOffice's JSON filter options (7.4 and later)."""


def installed() -> bool:
    """Whether the `soffice` command is on PATH."""
    return shutil.which(SOFFICE) is not None


def program() -> str | None:
    """What to run: `soffice.bin` beside `soffice` when there is one, else `soffice`; None
    when LibreOffice is not installed."""
    found = shutil.which(SOFFICE)
    if found is None:
        return None
    real = Path(found).resolve()
    binary = real.with_name("soffice.bin")
    return str(binary) if binary.is_file() and os.access(binary, os.X_OK) else str(real)


def _run(argv: list[str], env: dict[str, str], timeout: float) -> int:
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        start_new_session=True,
        preexec_fn=child_setup(),  # noqa: PLW1509 - unshare and prctl, resolved beforehand
    )
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise ExtractionTimeout(
            f"LibreOffice took longer than {timeout:g} seconds to convert this file and was "
            "stopped."
        ) from None


_PREFIX = "dpe-soffice-"
_turns = threading.Lock()
_profile: list[Path] = []


def _profile_folder() -> Path:
    """This process's LibreOffice profile folder (made private on first use)."""
    if not _profile:
        folder = Path(tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-profile-"))
        write_profile_settings(folder)  # before LibreOffice's first start on it
        _profile.append(folder)
        atexit.register(_drop_profile)  # a process killed instead is swept by the next one
    return _profile[0]


def _drop_profile() -> None:
    if _profile:
        shutil.rmtree(_profile.pop(), ignore_errors=True)


def sweep() -> None:
    """Remove the conversion folders left by processes that are gone."""
    for folder in Path(tempfile.gettempdir()).glob(f"{_PREFIX}*-*"):
        pid = folder.name[len(_PREFIX) :].split("-", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except OSError:
            continue


def run_conversion(
    binary: str, data: bytes, *, suffix: str, out_suffix: str, filter_arg: str, timeout: float
) -> bytes:
    """`data` (a `suffix` file: `.doc`) converted by LibreOffice's `--convert-to filter_arg`
    into a `out_suffix` file (`.docx`), whose bytes are returned; the project's error when
    LibreOffice made none, took too long or made one over `MAX_OUTPUT`."""
    with _turns:
        try:
            return _convert(
                binary,
                data,
                suffix=suffix,
                out_suffix=out_suffix,
                filter_arg=filter_arg,
                timeout=timeout,
            )
        except ExtractionError:
            _drop_profile()  # a run killed or failed may have left it half written
            raise


def _convert(
    binary: str, data: bytes, *, suffix: str, out_suffix: str, filter_arg: str, timeout: float
) -> bytes:
    sweep()
    with tempfile.TemporaryDirectory(prefix=f"{_PREFIX}{os.getpid()}-") as tmp:
        folder = Path(tmp)
        source = folder / f"document{suffix}"
        source.write_bytes(data)
        (folder / "out").mkdir()
        env = {**os.environ, "HOME": str(folder)}
        argv = [
            binary,
            "--headless",
            "--invisible",
            "--norestore",
            "--nologo",
            "--nodefault",
            "--nolockcheck",
            f"-env:UserInstallation={_profile_folder().as_uri()}",
            "--convert-to",
            filter_arg,
            "--outdir",
            str(folder / "out"),
            str(source),
        ]
        status = _run(argv, env, timeout)
        if status == _RESTART:
            status = _run(argv, env, timeout)
        result = folder / "out" / f"document{out_suffix}"
        if not result.is_file():
            raise CorruptError(
                f"LibreOffice could not convert this {suffix} file (exit status {status}); it "
                "may be damaged or password-protected, or LibreOffice lacks the part that "
                "opens it (Writer, Calc or Impress)."
            )
        if result.stat().st_size > MAX_OUTPUT:
            raise TooLargeError(f"The converted {out_suffix} is over {MAX_OUTPUT >> 20} MiB.")
        return result.read_bytes()


def export_pdf(data: bytes, suffix: str, page_unit: str, timeout: float) -> bytes:
    """`data`, a `suffix` file whose pages are `page_unit`s (section, slide, sheet), exported
    to PDF by LibreOffice (`PDF_EXPORTS`)."""
    binary = program()
    if binary is None:
        raise UnsupportedError(f"Drawing pages needs LibreOffice (the `{SOFFICE}` command).")
    if page_unit not in PDF_EXPORTS:
        raise UnsupportedError(f"LibreOffice draws no {page_unit} of a {suffix} file.")
    filter_arg = "pdf:" + PDF_EXPORTS[page_unit]
    return run_conversion(
        binary, data, suffix=suffix, out_suffix=".pdf", filter_arg=filter_arg, timeout=timeout
    )
