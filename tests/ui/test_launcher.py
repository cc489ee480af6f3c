"""``voxdesk`` with no command: the window, or one line where there is no display."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.serve_process import REPO
from tests.ui.window_process import run_window_until_ready_then_terminate
from voxdesk.app.history.store import HistoryStore

pytestmark = pytest.mark.integration  # runs voxdesk as a process


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
    status, errors = run_window_until_ready_then_terminate(tmp_path)
    assert status == 0, errors.decode()[-2000:]
    assert b"Traceback" not in errors
    with HistoryStore.open(tmp_path / "data" / "history.sqlite3") as store:  # closed cleanly, opens fine
        assert store.sessions() == []
