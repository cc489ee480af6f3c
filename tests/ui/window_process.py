"""``voxdesk`` opening its window as a real process (offscreen), stopped with SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.serve_process import REPO


def run_window_until_ready_then_terminate(home: Path, **env: str) -> tuple[int, bytes]:
    """Open the window with its data and config under ``home``, wait until its history file
    exists (the window is up, logging and signal handlers set), send SIGTERM; its exit status
    and stderr."""
    data = home / "data"
    environment = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "VOXDESK_DATA_DIR": str(data),
        "VOXDESK_CONFIG_DIR": str(home / "config"),
        **env,
    }
    window = subprocess.Popen(
        [sys.executable, "-m", "voxdesk.ui.launcher"],
        cwd=REPO,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while not (data / "history.sqlite3").exists():
            assert window.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        window.send_signal(signal.SIGTERM)
        _, errors = window.communicate(timeout=60)
    finally:
        window.kill()
    return window.returncode, errors
