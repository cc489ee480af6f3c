"""The Voice page of the settings: what Voxdesk says aloud and with which voice, with a button
that says a sentence with the voice as set."""

from __future__ import annotations

import asyncio
import copy

from PySide6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QFormLayout, QLabel, QLineEdit, QPushButton, QWidget

from voxdesk.app.settings import SpeechSettings
from voxdesk.app.speaking.playback import PlaybackUnavailable
from voxdesk.app.speaking.speaker import Speaker
from voxdesk.engine.errors import EngineUnavailable

__all__ = ["TEST_SENTENCE", "VoicePage"]

TEST_SENTENCE = "This is how Voxdesk answers you."
_BACKENDS = {
    "espeak-ng": "espeak-ng (on this computer)",
    "festival": "Festival (on this computer)",
    "openai": "An OpenAI-compatible speech server (/v1/audio/speech)",
}
_SAID = {
    "answers": "Answers to questions",
    "confirmations": "Questions before an action that needs a yes",
    "alarms": "Timer alarms (also a chime and a banner in the window)",
    "errors": "Actions that failed",
    "in_dictation": "Also in dictation mode (alarms are always said)",
}


class VoicePage(QWidget):
    """Edits a copy of the ``[speech]`` settings; :meth:`speech_settings` returns it."""

    def __init__(self, settings: SpeechSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._settings = copy.deepcopy(settings)
        self._tasks: set[asyncio.Task[None]] = set()
        form = QFormLayout(self)
        self.said: dict[str, QCheckBox] = {}
        for name, label in _SAID.items():
            box = QCheckBox(label)
            box.setAccessibleName(f"Say aloud: {label}")
            box.setChecked(bool(getattr(settings, name)))
            self.said[name] = box
            form.addRow("" if name != "answers" else "Say aloud", box)
        self.max_sentences = QDoubleSpinBox()
        self.max_sentences.setDecimals(0)
        self.max_sentences.setRange(1, 20)
        self.max_sentences.setValue(settings.max_sentences)
        self.max_sentences.setAccessibleName("Longest reply said, in sentences")
        self.max_sentences.setToolTip("A longer reply is cut there, with “more on screen”")
        form.addRow("Longest reply (sentences)", self.max_sentences)
        self.backend = QComboBox()
        self.backend.setAccessibleName("Speech synthesizer")
        for name, label in _BACKENDS.items():
            self.backend.addItem(label, name)
        self.backend.setCurrentIndex(max(0, self.backend.findData(settings.backend)))
        self.backend.currentIndexChanged.connect(self._show_backend)
        form.addRow("&Synthesizer", self.backend)
        self.voice = QLineEdit(settings.voice)
        self.voice.setAccessibleName("Voice")
        self.voice.setPlaceholderText("empty: the synthesizer's default; voxdesk voices lists them")
        form.addRow("&Voice", self.voice)
        self.rate = _spin(0.25, 4.0, 0.05, settings.rate, "Speaking speed, 1 the voice's own")
        form.addRow("Spee&d", self.rate)
        self.volume = _spin(0.0, 1.0, 0.05, settings.volume, "Volume, 0 to 1")
        form.addRow("V&olume", self.volume)
        self.url = QLineEdit(settings.url)
        self.url.setAccessibleName("Speech server URL")
        form.addRow("Speech server &URL", self.url)
        self.model = QLineEdit(settings.model)
        self.model.setAccessibleName("Speech server model")
        form.addRow("Speech server &model", self.model)
        self.api_key = QLineEdit(settings.api_key)
        self.api_key.setAccessibleName("Speech server API key")
        self.api_key.setEchoMode(QLineEdit.EchoMode.Password)
        form.addRow("Speech server API &key", self.api_key)
        self.test_button = QPushButton("&Test voice")
        self.test_button.clicked.connect(self.test_voice)
        self.status = QLabel()
        self.status.setAccessibleName("How the voice test went")
        self.status.setWordWrap(True)
        form.addRow(self.test_button, self.status)
        self._show_backend()

    def _show_backend(self) -> None:
        server = self.backend.currentData() == "openai"
        for field in (self.url, self.model, self.api_key):
            field.setEnabled(server)

    def speech_settings(self) -> SpeechSettings:
        """The ``[speech]`` settings as edited here."""
        result = copy.deepcopy(self._settings)
        for name, box in self.said.items():
            setattr(result, name, box.isChecked())
        result.max_sentences = int(self.max_sentences.value())
        result.backend = str(self.backend.currentData())
        result.voice = self.voice.text().strip()
        result.rate = self.rate.value()
        result.volume = self.volume.value()
        result.url = self.url.text().strip()
        result.model = self.model.text().strip()
        result.api_key = self.api_key.text()
        return result

    def test_voice(self) -> None:
        """Say :data:`TEST_SENTENCE` with the voice as set here, and say how it went."""
        self.test_button.setEnabled(False)
        self.status.setText("Speaking…")
        task = asyncio.ensure_future(self._test(self.speech_settings()))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _test(self, settings: SpeechSettings) -> None:
        try:
            await Speaker(settings).say(TEST_SENTENCE)
        except (EngineUnavailable, PlaybackUnavailable) as error:
            self.status.setText(str(error)[:1].upper() + str(error)[1:])
        else:
            self.status.setText(f"Said: “{TEST_SENTENCE}”")
        finally:
            self.test_button.setEnabled(True)


def _spin(low: float, high: float, step: float, value: float, name: str) -> QDoubleSpinBox:
    spin = QDoubleSpinBox()
    spin.setRange(low, high)
    spin.setSingleStep(step)
    spin.setValue(value)
    spin.setAccessibleName(name)
    return spin
