"""What keeps a LibreOffice conversion from reaching the network.

- **No network.** On Linux LibreOffice runs in a network namespace of its own, holding only a
  loopback interface that is down: nothing it opens can reach another host, nor a service of
  this one. The namespace is made in the child before `exec` (`unshare(CLONE_NEWNET)` where
  the process may, as root with `CAP_SYS_ADMIN`; otherwise inside a new user namespace,
  `unshare(CLONE_NEWUSER | CLONE_NEWNET)`, which an unprivileged user may make where the
  kernel allows it, with the user's own uid and gid mapped). Which of the two works is found
  once per process (`network_isolation`); where neither does (not Linux, user namespaces
  disabled, a seccomp profile that refuses them) conversions run with the host's network and
  a warning says so once.
- **No links followed.** The private profile's settings (`PROFILE_SETTINGS`, written before
  its first start) block every document's links to untrusted locations (pictures, sections,
  style sheets: `BlockUntrustedRefererLinks`), never update links or fields on load, never
  run macros, and send any HTTP or HTTPS request to a proxy at 127.0.0.1:9, where nothing
  listens.
"""

from __future__ import annotations

import ctypes
import logging
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger(__name__)

CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
_SCRIPTING = "/org.openoffice.Office.Common/Security/Scripting"
_INET = "/org.openoffice.Inet/Settings"


def _item(path: str, prop: str, value: str) -> str:
    prop_xml = f'<prop oor:name="{prop}" oor:op="fuse"><value>{value}</value></prop>'
    return f'<item oor:path="{path}">{prop_xml}</item>'


PROFILE_SETTINGS = "\n".join(
    [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<oor:items xmlns:oor="http://openoffice.org/2001/registry">',
        _item(_SCRIPTING, "BlockUntrustedRefererLinks", "true"),
        _item(_SCRIPTING, "DisableActiveContent", "true"),  # LibreOffice 24.2 and later
        _item(_SCRIPTING, "DisableMacrosExecution", "true"),
        _item(_SCRIPTING, "MacroSecurityLevel", "3"),
        _item("/org.openoffice.Office.Writer/Content/Update", "Link", "0"),  # never
        _item("/org.openoffice.Office.Writer/Content/Update", "Field", "false"),
        _item("/org.openoffice.Office.Writer/Content/Update", "Chart", "false"),
        _item("/org.openoffice.Office.Calc/Content/Update", "Link", "1"),  # never
        _item(_INET, "ooInetProxyType", "1"),  # manual: a proxy where nothing listens
        _item(_INET, "ooInetHTTPProxyName", "127.0.0.1"),
        _item(_INET, "ooInetHTTPProxyPort", "9"),
        _item(_INET, "ooInetHTTPSProxyName", "127.0.0.1"),
        _item(_INET, "ooInetHTTPSProxyPort", "9"),
        _item(_INET, "ooInetFTPProxyName", "127.0.0.1"),
        _item(_INET, "ooInetFTPProxyPort", "9"),
        _item(_INET, "ooInetNoProxy", ""),
        "</oor:items>",
        "",
    ]
)
"""The settings of the private profile: LibreOffice reads them as the user's own."""


def write_profile_settings(profile: Path) -> None:
    """Write `PROFILE_SETTINGS` into a profile folder LibreOffice has not started on yet."""
    user = profile / "user"
    user.mkdir(parents=True, exist_ok=True)
    (user / "registrymodifications.xcu").write_text(PROFILE_SETTINGS, encoding="utf-8")


_libc: list[ctypes.CDLL | None] = []


def _c() -> ctypes.CDLL | None:
    if not _libc:
        try:
            _libc.append(ctypes.CDLL(None, use_errno=True))
        except OSError:
            _libc.append(None)
    return _libc[0]


def _isolate(flags: int, uid: int, gid: int) -> None:  # pragma: no cover - in the child
    libc = _c()
    if libc is None or libc.unshare(flags) != 0:
        raise OSError(ctypes.get_errno(), "unshare failed")
    if flags & CLONE_NEWUSER:  # map our own ids, as `unshare --map-current-user` does
        with open("/proc/self/setgroups", "w") as f:
            f.write("deny")
        with open("/proc/self/uid_map", "w") as f:
            f.write(f"{uid} {uid} 1")
        with open("/proc/self/gid_map", "w") as f:
            f.write(f"{gid} {gid} 1")


_MODES = {"netns": CLONE_NEWNET, "userns": CLONE_NEWUSER | CLONE_NEWNET}
_found: list[str] = []


def network_isolation() -> str:
    """How this process's conversions are kept off the network: `netns`, `userns` or `none`
    (found once, by starting a trivial program each way)."""
    if not _found:
        _found.append(_find_mode())
    return _found[0]


def _find_mode() -> str:
    if not sys.platform.startswith("linux") or _c() is None:
        mode, why = "none", f"network namespaces are Linux's ({sys.platform})"
    else:
        program = shutil.which("true") or sys.executable
        argv = [program] if program != sys.executable else [program, "-c", ""]
        why = ""
        for mode in _MODES:
            try:
                subprocess.run(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    preexec_fn=_child(mode, die_with_parent=False),
                    check=True,
                    timeout=30,
                )
                return mode
            except (OSError, subprocess.SubprocessError) as exc:
                why = str(exc)
        mode, why = "none", f"the kernel refused a network namespace ({why})"
    log.warning(
        "LibreOffice conversions run with this host's network: %s. Their profile still blocks "
        "linked pictures, sections and style sheets, and sends HTTP to a proxy that does not "
        "answer.",
        why,
    )
    return mode


def _child(mode: str, die_with_parent: bool = True) -> Callable[[], None]:
    """What the child runs before exec: enter the namespaces of `mode`, then ask for SIGKILL
    when the parent dies (after: a change of credentials clears that request). Everything it
    calls is resolved here, in the parent."""
    libc = _c()
    prctl = libc.prctl if libc is not None and hasattr(libc, "prctl") else None
    flags, uid, gid = _MODES.get(mode, 0), os.getuid(), os.getgid()

    def setup() -> None:  # pragma: no cover - runs in the child before exec
        if flags:
            _isolate(flags, uid, gid)
        if die_with_parent and prctl is not None:
            prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG

    return setup


def child_setup() -> Callable[[], None]:
    """The `preexec_fn` of a LibreOffice conversion."""
    return _child(network_isolation())
