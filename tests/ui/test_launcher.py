"""``voxdesk`` with no command: the window, or one line where there is no display."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.serve_process import REPO
from voxdesk.app.history.store import HistoryStore


def test_without_a_display_voxdesk_says_so_in_one_line() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    result = subprocess.run(
        [sys.executable, "-m", "voxdesk.ui.launcher"], cwd=REPO, env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2 and result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert "no display" in line and "voxdesk transcribe" in line and "voxdesk serve" in line


def test_commands_still_work_through_the_launcher() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "voxdesk.ui.launcher", "--version"], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0 and result.stdout.startswith("voxdesk ")


def test_sigterm_closes_the_window_cleanly(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "VOXDESK_DATA_DIR": str(data),
        "VOXDESK_CONFIG_DIR": str(tmp_path / "config"),
    }
    window = subprocess.Popen(
        [sys.executable, "-m", "voxdesk.ui.launcher"], cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 60
        while not (data / "history.sqlite3").exists():  # the signal handlers are set before this file is made
            assert window.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        window.send_signal(signal.SIGTERM)
        _, errors = window.communicate(timeout=60)
    finally:
        window.kill()
    assert window.returncode == 0, errors.decode()[-2000:]
    assert b"Traceback" not in errors
    with HistoryStore.open(data / "history.sqlite3") as store:  # closed cleanly, opens fine
        assert store.sessions() == []
