"""Starting a real ``voxdesk serve`` process for tests."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LISTENING = r"listening on ws://[\d.]+:(\d+)/v1/realtime"
"""The line ``voxdesk serve`` prints once the engine is loaded and sessions are taken."""
LOADING = r"loading the engine; port (\d+) answers /health with 503"
"""The line it prints once bound, before the engine is loaded."""


def start_serve(
    *args: str, until: str = LISTENING, drain: bool = False, module: str = "voxdesk.cli.main"
) -> tuple[subprocess.Popen[str], int]:
    """``voxdesk serve`` on a free loopback port (extra ``args`` appended), once its stderr
    shows ``until`` (a pattern whose group is the port); the process and its port.

    With ``drain`` the rest of stderr is read and dropped on a thread, so a server that logs a
    lot for a long test never blocks on a full pipe. ``module`` is the program run with
    ``python -m`` (a test's wrapper of ``voxdesk``)."""
    process = subprocess.Popen(
        [sys.executable, "-m", module, "serve", "--port", "0", *args],
        cwd=REPO,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "VOXDESK_API_KEY": ""},
    )
    assert process.stderr is not None
    try:
        for line in process.stderr:
            if match := re.search(until, line):
                if drain:
                    threading.Thread(target=process.stderr.read, daemon=True).start()
                return process, int(match.group(1))
    except BaseException:  # a test's timeout while it starts: no server left behind
        process.kill()
        raise
    process.wait(timeout=10)
    raise AssertionError(f"voxdesk serve exited with {process.returncode} before printing {until!r}")
