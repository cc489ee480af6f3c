"""The settings dialog edits every setting the issue names and hands back a copy."""

from __future__ import annotations

from PySide6.QtGui import QKeySequence
from pytestqt.qtbot import QtBot

from voxdesk.app.settings import Settings
from voxdesk.engine.whisper.catalog import ModelChoice
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


def test_the_built_in_engine_model_language_and_device_are_chosen_here(qtbot: QtBot) -> None:
    original = Settings()
    original.engine.whisper_model = "/models/my-whisper"
    models = [
        ModelChoice("tiny.en", 75_000_000, multilingual=False, downloaded=True),
        ModelChoice("small", 488_000_000, multilingual=True, downloaded=False),
    ]
    dialog = SettingsDialog(original, [], models=models)
    qtbot.addWidget(dialog)
    labels = [dialog.whisper_model.itemText(index) for index in range(dialog.whisper_model.count())]
    assert labels[:2] == [
        "tiny.en — 75 MB, English only, bundled",
        "small — 488 MB, multilingual, download on first use",
    ]
    assert dialog.whisper_model.currentText() == "/models/my-whisper"  # a folder stays chosen
    assert dialog.language.currentData() == "auto" and dialog.language.findData("de") > 0
    dialog.whisper_model.setCurrentIndex(dialog.whisper_model.findData("small"))
    dialog.language.setCurrentIndex(dialog.language.findData("de"))
    dialog.whisper_device.setCurrentIndex(dialog.whisper_device.findData("cuda"))
    edited = dialog.settings().engine
    assert (edited.whisper_model, edited.language, edited.device) == ("small", "de", "cuda")
    dialog.engine.setCurrentIndex(dialog.engine.findData("remote"))
    assert not dialog.whisper_model.isEnabled() and not dialog.language.isEnabled()
    assert not dialog.whisper_device.isEnabled()


def test_the_openai_kind_defaults_the_url_to_openai_and_keeps_a_typed_one(qtbot: QtBot) -> None:
    dialog = SettingsDialog(Settings(), [])
    qtbot.addWidget(dialog)
    dialog.engine.setCurrentIndex(dialog.engine.findData("remote"))
    assert dialog.server_dialect.isEnabled() and dialog.server_dialect.currentText() == "vLLM / Voxdesk"
    dialog.server_dialect.setCurrentIndex(dialog.server_dialect.findData("openai"))
    assert dialog.server_dialect.currentText() == "OpenAI Realtime"
    assert dialog.server_url.text() == "wss://api.openai.com/v1/realtime?intent=transcription"
    dialog.server_model.setText("gpt-4o-transcribe")
    dialog.api_key.setText("sk-123")
    edited = dialog.settings().engine
    assert (edited.server_dialect, edited.server_url, edited.server_model, edited.api_key) == (
        "openai",
        "wss://api.openai.com/v1/realtime?intent=transcription",
        "gpt-4o-transcribe",
        "sk-123",
    )
    dialog.server_dialect.setCurrentIndex(dialog.server_dialect.findData("vllm"))
    assert dialog.server_url.text() == "ws://127.0.0.1:8000"
    dialog.server_url.setText("ws://127.0.0.1:9000/v1")
    dialog.server_dialect.setCurrentIndex(dialog.server_dialect.findData("openai"))
    assert dialog.server_url.text() == "ws://127.0.0.1:9000/v1", "a URL the user typed was replaced"
    assert dialog.server_dialect.accessibleName() == "Server kind"


def test_the_dictation_overlay_can_be_turned_off(qtbot: QtBot) -> None:
    dialog = SettingsDialog(Settings(), ["default"], "")
    qtbot.addWidget(dialog)
    assert dialog.overlay.isChecked() and dialog.overlay.accessibleName() == "Dictation overlay"
    dialog.overlay.setChecked(False)
    assert dialog.settings().listening.overlay is False


def test_keeping_keys_in_the_file_is_an_explicit_choice(qtbot: QtBot) -> None:
    dialog = SettingsDialog(Settings(), [])
    qtbot.addWidget(dialog)
    assert not dialog.keys_in_file.isChecked() and not dialog.settings().keys.store_in_file
    dialog.keys_in_file.setChecked(True)
    assert dialog.settings().keys.store_in_file
