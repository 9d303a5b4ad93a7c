"""The one-shot command's own limits: a deadline that ends it with a clear message."""

from __future__ import annotations

import subprocess
import sys
import time

SCRIPT = """
import time
from dpe_server.isolation.guard import arm_deadline
arm_deadline(1.0, "the document")
time.sleep(30)
"""


def test_deadline_ends_the_process_with_a_message() -> None:
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 3
    assert "took longer than 1 s" in done.stderr
    assert time.monotonic() - start < 20


def test_disarmed_deadline_lets_the_process_finish() -> None:
    script = (
        "import time\nfrom dpe_server.isolation.guard import arm_deadline, disarm\n"
        "d = arm_deadline(1.0, 'x')\ndisarm(d)\ntime.sleep(2)\nprint('done')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert (done.returncode, done.stdout.strip()) == (0, "done")
