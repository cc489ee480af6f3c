"""The actions panel (offscreen) driving a real ActionCenter, and the Qt clipboard service."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QPushButton
from pytestqt.qtbot import QtBot

from tests.app.actions.fakes import RecordingKeyboard, RecordingLauncher, RecordingNotifier, RecordingOpener
from voxdesk.app.actions.center import ActionCenter, ActionRecord, ActionStatus
from voxdesk.app.actions.commands import CommandSource
from voxdesk.app.actions.services import Services
from voxdesk.app.settings import ActionSettings
from voxdesk.ui.actions_panel import ActionsPanel
from voxdesk.ui.desktop_services import DesktopNotifier, QtClipboard

WRITE_ARGV = "import json, sys; open(sys.argv[1], 'w').write(json.dumps(sys.argv[2:]))"


@pytest.fixture
def center(tmp_path: Path) -> ActionCenter:
    user = tmp_path / "commands.toml"
    argv = [sys.executable, "-c", WRITE_ARGV, str(tmp_path / "argv.json"), "{text}"]
    user.write_text(f'[commands.note]\nphrases = ["make a note {{text}}"]\nrun = {json.dumps(argv)}\n')
    services = Services(
        clipboard=QtClipboard(),
        notifier=RecordingNotifier(),
        open_url=RecordingOpener(),
        launcher=RecordingLauncher(),
        keyboard=RecordingKeyboard(),
    )
    return ActionCenter(ActionSettings(), services, commands=CommandSource(user_path=user))


def _say(center: ActionCenter, qtbot: QtBot, text: str) -> ActionRecord:
    future: asyncio.Future[ActionRecord | None] = asyncio.ensure_future(center.handle_utterance(text))
    qtbot.waitUntil(future.done, timeout=10_000)
    record = future.result()
    assert record is not None
    return record


def test_confirm_runs_a_waiting_command(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, center: ActionCenter, tmp_path: Path
) -> None:
    panel = ActionsPanel(center)
    qtbot.addWidget(panel)
    panel.show()
    record = _say(center, qtbot, "make a note call mum; rm -rf ~")
    buttons = panel.buttons(record.id)
    assert panel.status_text(record.id) == "waiting for confirmation"
    assert (buttons.confirm.isEnabled(), buttons.cancel.isEnabled(), buttons.undo.isEnabled()) == (True, True, False)
    assert not (tmp_path / "argv.json").exists()
    qtbot.mouseClick(buttons.confirm, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.status_text(record.id) == "done", timeout=10_000)
    assert json.loads((tmp_path / "argv.json").read_text()) == ["call mum; rm -rf ~"]
    assert not buttons.confirm.isEnabled() and not buttons.cancel.isEnabled()
    assert "note" in panel.log_view.toPlainText()


def test_cancel_never_runs(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, center: ActionCenter, tmp_path: Path
) -> None:
    panel = ActionsPanel(center)
    qtbot.addWidget(panel)
    record = _say(center, qtbot, "make a note something")
    qtbot.mouseClick(panel.buttons(record.id).cancel, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.status_text(record.id) == "cancelled", timeout=5_000)
    assert not panel.buttons(record.id).confirm.isEnabled()
    assert not (tmp_path / "argv.json").exists()


def test_undo_typed_text_and_clipboard(qtbot: QtBot, qloop: asyncio.AbstractEventLoop, center: ActionCenter) -> None:
    panel = ActionsPanel(center)
    qtbot.addWidget(panel)
    keyboard = center.services.keyboard
    assert isinstance(keyboard, RecordingKeyboard)
    typed = _say(center, qtbot, "type hello there")
    assert keyboard.text == "hello there"
    assert panel.buttons(typed.id).undo.isEnabled()
    qtbot.mouseClick(panel.buttons(typed.id).undo, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.status_text(typed.id) == "undone", timeout=5_000)
    assert keyboard.text == "" and not panel.buttons(typed.id).undo.isEnabled()

    QGuiApplication.clipboard().setText("old clipboard")
    copied = _say(center, qtbot, "copy the meeting notes")
    assert QGuiApplication.clipboard().text() == "the meeting notes"
    qtbot.mouseClick(panel.buttons(copied.id).undo, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.status_text(copied.id) == "undone", timeout=5_000)
    assert QGuiApplication.clipboard().text() == "old clipboard"


def test_mode_toggle_and_voice_mode_switch(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, center: ActionCenter
) -> None:
    panel = ActionsPanel(center)
    qtbot.addWidget(panel)
    assert panel.mode_button.text() == "Switch to dictation mode" and not panel.mode_button.isChecked()
    qtbot.mouseClick(panel.mode_button, Qt.MouseButton.LeftButton)
    assert center.mode == "dictation" and panel.mode_button.isChecked()
    assert panel.mode_label.text().startswith("Dictation mode")
    _say(center, qtbot, "switch to command mode")
    qtbot.waitUntil(lambda: center.mode == "command" and not panel.mode_button.isChecked(), timeout=5_000)


def test_failed_action_shows_its_message(qtbot: QtBot, qloop: asyncio.AbstractEventLoop, center: ActionCenter) -> None:
    panel = ActionsPanel(center)
    qtbot.addWidget(panel)
    record = _say(center, qtbot, "open website not a web address at all")
    assert panel.status_text(record.id) == "failed"
    status, details = panel.table.item(0, 2), panel.table.item(0, 1)
    assert status is not None and "web address" in status.toolTip()
    assert details is not None and details.text().endswith(status.toolTip())


def test_records_from_before_the_panel_are_shown(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, center: ActionCenter
) -> None:
    first = _say(center, qtbot, "open the browser")
    panel = ActionsPanel(center)
    qtbot.addWidget(panel)
    assert panel.status_text(first.id) == "done" and panel.table.rowCount() == 1


def test_controls_have_accessible_names(qtbot: QtBot, qloop: asyncio.AbstractEventLoop, center: ActionCenter) -> None:
    panel = ActionsPanel(center)
    qtbot.addWidget(panel)
    _say(center, qtbot, "make a note x")
    for button in panel.findChildren(QPushButton):
        assert button.accessibleName(), button.text()
    assert panel.table.accessibleName() == "Recognized actions"
    assert panel.log_view.accessibleName() == "Action log"


def test_a_deleted_panel_stops_listening(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, center: ActionCenter, caplog: pytest.LogCaptureFixture
) -> None:
    panel = ActionsPanel(center)
    panel.deleteLater()
    qtbot.wait(50)
    with caplog.at_level("ERROR", logger="voxdesk.actions"):
        record = _say(center, qtbot, "open the browser")
    assert record.status is ActionStatus.DONE
    assert "listener failed" not in caplog.text


def test_qt_clipboard_round_trip(qapp: Any) -> None:
    clipboard = QtClipboard()
    clipboard.set_text("voxdesk ✓")
    assert clipboard.text() == "voxdesk ✓"


def test_a_notification_with_no_service_and_no_tray_is_logged(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no notify-send
    with caplog.at_level("WARNING", logger="voxdesk.actions"):
        DesktopNotifier(None).notify("Timer", "Your 5 minute timer is up")
    assert "Your 5 minute timer is up (no notification service or system tray to show it)" in caplog.text
