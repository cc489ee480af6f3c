"""The Voice page of the settings: every ``[speech]`` field comes back from the dialog, and
*Test voice* says its sentence on the loudspeaker of the test rig, or why it could not."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import numpy as np
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from tests.desktop_rig import VirtualMic
from voxdesk.app.files.reading import read_audio
from voxdesk.app.settings import Settings, SpeechSettings
from voxdesk.ui.settings_dialog import SettingsDialog
from voxdesk.ui.voice_settings import TEST_SENTENCE


def test_every_speech_setting_has_a_field_that_comes_back(qtbot: QtBot) -> None:
    settings = Settings()
    settings.speech = SpeechSettings(
        backend="openai", voice="nova", rate=1.25, volume=0.5, url="http://10.0.0.2:8880/v1", model="kokoro",
        api_key="k", answers=False, confirmations=False, alarms=False, errors=False, in_dictation=True,
        max_sentences=4,
    )  # fmt: skip
    assert all(
        getattr(settings.speech, f.name) != f.default for f in dataclasses.fields(SpeechSettings)
    )  # each field differs from its default: a field the dialog dropped would come back as the default
    dialog = SettingsDialog(settings, [])
    qtbot.addWidget(dialog)
    assert dialog.settings().speech == settings.speech
    dialog.voice.backend.setCurrentIndex(dialog.voice.backend.findData("espeak-ng"))
    assert not dialog.voice.url.isEnabled()  # only a speech server has a URL


def test_test_voice_says_its_sentence_or_why_it_cannot(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, virtual_mic: VirtualMic, tmp_path: Path
) -> None:
    dialog = SettingsDialog(Settings(), [])
    qtbot.addWidget(dialog)
    page = dialog.voice
    recorder = virtual_mic.record_speaker(tmp_path / "test.wav")
    qtbot.mouseClick(page.test_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(page.test_button.isEnabled, timeout=20_000)
    assert page.status.text() == f"Said: “{TEST_SENTENCE}”"
    virtual_mic.finish_recording(recorder, tmp_path / "test.wav")
    assert np.abs(read_audio(tmp_path / "test.wav")).max() > 0.1
    page.voice.setText("xx-nowhere")
    qtbot.mouseClick(page.test_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(page.test_button.isEnabled, timeout=20_000)
    assert page.status.text().startswith("Espeak-ng failed: ")
