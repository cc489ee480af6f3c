"""The settings dialog edits every setting the issue names and hands back a copy."""

from __future__ import annotations

from PySide6.QtGui import QKeySequence
from pytestqt.qtbot import QtBot

from voxdesk.app.settings import Settings
from voxdesk.ui.settings_dialog import SettingsDialog


def test_edits_come_back_and_the_original_is_untouched(qtbot: QtBot) -> None:
    original = Settings()
    original.audio.device = "Gone Mic"
    dialog = SettingsDialog(original, ["default", "pulse"], "System-wide shortcuts are not available on Wayland")
    qtbot.addWidget(dialog)
    assert dialog.device.currentText() == "Gone Mic (not connected)"
    assert not dialog.server_url.isEnabled()
    dialog.device.setCurrentIndex(dialog.device.findData("pulse"))
    dialog.engine.setCurrentIndex(dialog.engine.findData("remote"))
    assert dialog.server_url.isEnabled() and dialog.api_key.isEnabled() and not dialog.vllm_model.isEnabled()
    dialog.server_url.setText(" ws://asr.local:8000 ")
    dialog.api_key.setText("secret")
    dialog.silence.setValue(800)
    dialog.toggle_shortcut.setKeySequence(QKeySequence("Ctrl+Shift+L"))
    dialog.hold_key.setKeySequence(QKeySequence("F8"))
    edited = dialog.settings()
    assert edited.audio.device == "pulse"
    assert (edited.engine.kind, edited.engine.server_url, edited.engine.api_key) == (
        "remote",
        "ws://asr.local:8000",
        "secret",
    )
    assert (edited.listening.silence_ms, edited.listening.toggle_shortcut, edited.listening.hold_to_talk_key) == (
        800,
        "Ctrl+Shift+L",
        "F8",
    )
    assert original.engine.kind == "builtin" and original.audio.device == "Gone Mic"
    for field in (dialog.device, dialog.engine, dialog.server_url, dialog.api_key, dialog.silence, dialog.hold_key):
        assert field.accessibleName()
