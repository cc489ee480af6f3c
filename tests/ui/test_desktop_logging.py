"""The window's log file, and the Help menu's way to it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtWidgets import QMenu
from pytestqt.qtbot import QtBot

from tests.serve_process import REPO
from voxdesk.app.listening.controller import Controller
from voxdesk.app.settings import Settings
from voxdesk.ui.main_window import MainWindow


def test_a_window_session_leaves_its_log_file(tmp_path: Path) -> None:
    data, logs = tmp_path / "data", tmp_path / "logs"
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "VOXDESK_DATA_DIR": str(data),
        "VOXDESK_CONFIG_DIR": str(tmp_path / "config"),
        "VOXDESK_LOG_DIR": str(logs),
    }
    window = subprocess.Popen(
        [sys.executable, "-m", "voxdesk.ui.launcher"], cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 60
        while not (data / "history.sqlite3").exists():  # made after logging is set up
            assert window.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        window.send_signal(signal.SIGTERM)
        _, errors = window.communicate(timeout=60)
    finally:
        window.kill()
    assert window.returncode == 0, errors.decode()[-2000:]
    text = (logs / "voxdesk.log").read_text(encoding="utf-8")
    assert f"INFO voxdesk.desktop: window starting; logging to {logs / 'voxdesk.log'}" in text


def test_help_menu_opens_the_log_folder(qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VOXDESK_LOG_DIR", str(tmp_path / "logs"))
    opened: list[QUrl] = []

    def open_url(url: QUrl) -> bool:
        opened.append(url)
        return True

    monkeypatch.setattr("voxdesk.ui.main_window.QDesktopServices.openUrl", open_url)
    window = MainWindow(Controller(Settings()))
    qtbot.addWidget(window)
    (help_menu,) = [a.menu() for a in window.menuBar().actions() if a.text() == "&Help"]
    assert isinstance(help_menu, QMenu) and window.open_log_folder_action in help_menu.actions()
    window.open_log_folder_action.trigger()
    assert [url.toLocalFile() for url in opened] == [str(tmp_path / "logs")]
    assert (tmp_path / "logs").is_dir()
