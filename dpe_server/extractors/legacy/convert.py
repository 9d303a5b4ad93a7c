"""Converting a legacy file with LibreOffice, headless, in a private temporary folder.

- the file's bytes are written to a fresh temporary folder (never beside the original: the
  watched folder is only read), with `HOME` inside it; the folder is removed afterwards;
- LibreOffice runs with a private profile (`-env:UserInstallation`), one per process, made on
  its first conversion and kept for the next ones (a new profile costs about 2 s more), so
  conversions share nothing with a user's LibreOffice or with another worker; conversions of
  one process take turns on it;
- only true legacy bytes are converted (`kinds`: an OLE2 file holding the format's stream, or
  Rich Text), never another format LibreOffice would detect by its content;
- `soffice.bin` is run directly when it sits beside `soffice` (the launcher script forks it),
  in its own session, in a network namespace of its own where the platform allows it, with
  a profile that follows no link (`sandbox`), and with `PR_SET_PDEATHSIG` so it dies with the
  worker that started it (a worker killed at its deadline leaves no LibreOffice behind); a
  first run on a new profile exits 81 (restart) and is run once more;
- it has its own deadline (`timeout`), under the worker's: past it the whole process group is
  killed and the read fails with `timeout`;
- a result is kept in this process's memory (the last `_KEEP` conversions, by the sha-256 of
  the input), so the probe, the extraction and a picture read of one file in one worker
  convert it once;
- a worker killed mid-conversion cannot remove its folder: each conversion first removes the
  folders of processes that no longer exist (`sweep`; the folder's name carries its pid).
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import shutil
import signal
import subprocess
import tempfile
import threading
from collections import OrderedDict
from pathlib import Path

from dpe_server.extractors.legacy import SOFFICE, missing_error, target
from dpe_server.extractors.legacy.kinds import conversion_kind_of
from dpe_server.extractors.legacy.sandbox import child_setup, write_profile_settings
from dpe_server.model.errors import (
    CorruptError,
    ExtractionError,
    ExtractionTimeout,
    TooLargeError,
)

_RESTART = 81
_FILTERS = {"docx": "docx:MS Word 2007 XML", "pptx": "pptx:Impress MS PowerPoint 2007 XML"}
"""The export filter named outright: a .doc that is HTML opens in Writer/Web, which has no
default .docx export."""
_KEEP = 4
_MAX_OUTPUT = 256 * 1024 * 1024
_done: OrderedDict[str, bytes] = OrderedDict()


def _program(fmt: str) -> str:
    found = shutil.which(SOFFICE)
    if found is None:
        raise missing_error(fmt)
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


def convert(data: bytes, fmt: str, timeout: float) -> bytes:
    """The bytes of `data` (a .`fmt` file) converted to its OOXML counterpart."""
    fmt = conversion_kind_of(data, fmt)  # only true legacy bytes reach LibreOffice
    key = hashlib.sha256(fmt.encode() + b"\0" + data).hexdigest()
    if key in _done:
        _done.move_to_end(key)
        return _done[key]
    out_fmt = target(fmt)
    program = _program(fmt)
    with _turns:
        try:
            converted = _convert(program, data, fmt, out_fmt, timeout)
        except ExtractionError:
            _drop_profile()  # a conversion killed or failed may have left it half written
            raise
    _done[key] = converted
    while len(_done) > _KEEP:
        _done.popitem(last=False)
    return converted


def _convert(program: str, data: bytes, fmt: str, out_fmt: str, timeout: float) -> bytes:
    sweep()
    with tempfile.TemporaryDirectory(prefix=f"{_PREFIX}{os.getpid()}-") as tmp:
        folder = Path(tmp)
        source = folder / f"document.{fmt}"
        source.write_bytes(data)
        (folder / "out").mkdir()
        env = {**os.environ, "HOME": str(folder)}
        argv = [
            program,
            "--headless",
            "--invisible",
            "--norestore",
            "--nologo",
            "--nodefault",
            "--nolockcheck",
            f"-env:UserInstallation={_profile_folder().as_uri()}",
            "--convert-to",
            _FILTERS[out_fmt],
            "--outdir",
            str(folder / "out"),
            str(source),
        ]
        status = _run(argv, env, timeout)
        if status == _RESTART:
            status = _run(argv, env, timeout)
        result = folder / "out" / f"document.{out_fmt}"
        if not result.is_file():
            raise CorruptError(
                f"LibreOffice could not convert this .{fmt} file (exit status {status}); it may "
                "be damaged or password-protected."
            )
        if result.stat().st_size > _MAX_OUTPUT:
            raise TooLargeError(f"The converted .{out_fmt} is over {_MAX_OUTPUT >> 20} MiB.")
        return result.read_bytes()
