"""The window's log file, and the Help menu's way to it."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtWidgets import QMenu
from pytestqt.qtbot import QtBot

from tests.ui.window_process import run_window_until_ready_then_terminate
from voxdesk.app.listening.controller import Controller
from voxdesk.app.settings import Settings
from voxdesk.ui.main_window import MainWindow

pytestmark = pytest.mark.integration  # starts the window as a process


def test_a_window_session_leaves_its_log_file(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    status, errors = run_window_until_ready_then_terminate(tmp_path, VOXDESK_LOG_DIR=str(logs))
    assert status == 0, errors.decode()[-2000:]
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
