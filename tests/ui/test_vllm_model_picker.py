"""The vLLM model picker in Settings: the known realtime models, a typed hub id, or a folder."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog
from pytestqt.qtbot import QtBot

from voxdesk.app.settings import Settings
from voxdesk.engine import EngineKind
from voxdesk.engine.vllm.engine import VllmSettings
from voxdesk.engine.vllm.models import REALTIME_MODELS
from voxdesk.ui.settings_dialog import SettingsDialog


def open_dialog(qtbot: QtBot, settings: Settings) -> SettingsDialog:
    dialog = SettingsDialog(settings, [])
    qtbot.addWidget(dialog)
    return dialog


def test_the_known_realtime_models_are_offered_with_the_default_chosen(qtbot: QtBot) -> None:
    dialog = open_dialog(qtbot, Settings())
    picker = dialog.vllm_model
    assert [picker.itemText(i) for i in range(picker.count())] == [model.name for model in REALTIME_MODELS]
    assert picker.currentText() == VllmSettings.model == REALTIME_MODELS[0].name
    assert "Voxtral" in str(picker.itemData(0, Qt.ItemDataRole.ToolTipRole))
    assert not picker.isEnabled() and not dialog.vllm_folder.isEnabled()
    dialog.engine.setCurrentIndex(dialog.engine.findData(EngineKind.VLLM))
    assert picker.isEnabled() and dialog.vllm_folder.isEnabled()


def test_a_typed_hub_id_is_kept(qtbot: QtBot) -> None:
    dialog = open_dialog(qtbot, Settings())
    dialog.engine.setCurrentIndex(dialog.engine.findData(EngineKind.VLLM))
    dialog.vllm_model.setCurrentText("  someone/Another-Realtime-Model ")
    assert dialog.settings().engine.vllm_model == "someone/Another-Realtime-Model"


def test_a_folder_is_chosen_with_the_button(qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A fake of the platform's folder dialog, which would wait for a person.
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *args: str(tmp_path))
    settings = Settings()
    settings.engine.kind = EngineKind.VLLM
    dialog = open_dialog(qtbot, settings)
    qtbot.mouseClick(dialog.vllm_folder, Qt.MouseButton.LeftButton)
    assert dialog.settings().engine.vllm_model == str(tmp_path)


def test_a_saved_folder_shows_as_it_is(qtbot: QtBot, tmp_path: Path) -> None:
    settings = Settings()
    settings.engine.vllm_model = str(tmp_path)
    assert open_dialog(qtbot, settings).vllm_model.currentText() == str(tmp_path)
