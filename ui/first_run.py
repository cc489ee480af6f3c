"""The set-up dialog shown on the first start (and from the Voxdesk menu): pick the microphone
and watch its level, play the last 3 s back, choose the engine (a remote server's connection is
tested for real), then start. Skip keeps the defaults."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Coroutine
from typing import Any

import numpy as np
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from voxdesk.app.first_run import PLAYBACK_SECONDS, MicrophoneCheck, check_server
from voxdesk.app.listening.capture import AudioLevel, CaptureStatus, MicrophoneUnavailable
from voxdesk.app.listening.level import LevelWatch
from voxdesk.app.settings import EngineSettings, Settings
from voxdesk.app.speaking.playback import Playback, PlaybackUnavailable
from voxdesk.engine.errors import VoxdeskError
from voxdesk.engine.kinds import EngineKind
from voxdesk.engine.session import SAMPLE_RATE
from voxdesk.engine.tts.speech import Speech
from voxdesk.ui.level_meter import LevelMeter
from voxdesk.ui.llm_settings import LlmPage

__all__ = ["FirstRunDialog"]


class FirstRunDialog(QDialog):
    """``devices`` are the input devices' names; ``cuda`` the CUDA device's name, or None."""

    def __init__(self, settings: Settings, devices: list[str], cuda: str | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Set up Voxdesk")
        self.setAccessibleName("Set up Voxdesk")
        self.setMinimumWidth(520)
        self._settings = copy.deepcopy(settings)
        self._tasks: set[asyncio.Task[None]] = set()
        self._check: MicrophoneCheck | None = None
        self._check_task: asyncio.Task[None] | None = None
        self.level_watch = LevelWatch()

        intro = QLabel("Say something to check your microphone, then choose how speech is recognized.")
        intro.setWordWrap(True)
        self.device = QComboBox()
        self.device.setAccessibleName("Microphone")
        self.device.addItem("System default", "")
        for name in devices:
            self.device.addItem(name, name)
        self.device.setCurrentIndex(max(0, self.device.findData(settings.audio.device)))
        self.device.currentIndexChanged.connect(lambda _: self.start_check())
        self.meter = LevelMeter()
        self.mic_status = QLabel("Say something: the bar moves while you speak.")
        self.mic_status.setAccessibleName("Microphone check")
        self.mic_status.setWordWrap(True)
        self.play_button = QPushButton(f"&Play back the last {PLAYBACK_SECONDS:.0f} s")
        self.play_button.setAccessibleName("Play back what the microphone heard")
        self.play_button.clicked.connect(self.play)
        microphone = QGroupBox("Microphone")
        mic_form = QFormLayout(microphone)
        mic_form.addRow("&Microphone", self.device)
        mic_form.addRow("Level", self.meter)
        mic_form.addRow("", self.mic_status)
        mic_form.addRow("", self.play_button)

        self.builtin = QRadioButton("&Built-in (on this computer's processor, offline)")
        self.gpu = QRadioButton(f"Local &GPU ({cuda})" if cuda else "Local GPU (no CUDA device found)")
        self.gpu.setEnabled(cuda is not None)
        self.remote = QRadioButton("&Remote speech server")
        self.engines = QButtonGroup(self)
        self._engine_buttons = {
            EngineKind.BUILTIN: self.builtin,
            EngineKind.VLLM: self.gpu,
            EngineKind.REMOTE: self.remote,
        }
        for button in self._engine_buttons.values():
            button.setAccessibleName(button.text().replace("&", ""))
            self.engines.addButton(button)
        chosen = self._engine_buttons.get(EngineKind(settings.engine.kind), self.builtin)
        (chosen if chosen.isEnabled() else self.builtin).setChecked(True)
        self.server_url = QLineEdit(settings.engine.server_url)
        self.server_url.setPlaceholderText("ws://host:8000 (a /v1/realtime server) or tcp://host:10300 (Wyoming)")
        self.server_url.setAccessibleName("Server URL")
        self.test_button = QPushButton("&Test connection")
        self.test_button.setAccessibleName("Test the connection to the server")
        self.test_button.clicked.connect(self.test_connection)
        self.server_status = QLabel()
        self.server_status.setAccessibleName("Connection test result")
        self.server_status.setWordWrap(True)
        server_row = QHBoxLayout()
        server_row.addWidget(self.server_url, 1)
        server_row.addWidget(self.test_button)
        engine = QGroupBox("Speech engine")
        engine_box = QVBoxLayout(engine)
        for widget in (self.builtin, self.gpu, self.remote):
            engine_box.addWidget(widget)
        engine_box.addLayout(server_row)
        engine_box.addWidget(self.server_status)
        self.remote.toggled.connect(self._follow_engine)
        self._follow_engine()

        self.llm = LlmPage(settings.actions)
        self.llm_box = QGroupBox("Language model (optional: cleans up dictation, picks commands)")
        self.llm_box.setCheckable(True)
        self.llm_box.setChecked(False)
        QVBoxLayout(self.llm_box).addWidget(self.llm)
        self.llm.setVisible(False)
        self.llm_box.toggled.connect(self.llm.setVisible)

        buttons = QDialogButtonBox()
        self.start_button = buttons.addButton("&Start", QDialogButtonBox.ButtonRole.AcceptRole)
        self.skip_button = buttons.addButton("S&kip", QDialogButtonBox.ButtonRole.RejectRole)
        self.start_button.setDefault(True)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        for part in (intro, microphone, engine, self.llm_box, buttons):
            layout.addWidget(part)
        self.finished.connect(lambda _: self.stop_check())

    # -- the microphone ---------------------------------------------------------------------

    def start_check(self) -> None:
        """Listen on the chosen microphone (again)."""
        self.stop_check()
        self.level_watch.start()
        self._check = MicrophoneCheck(self.device.currentData(), self._heard, self._capture_status)
        self._check_task = self._spawn(self._run_check(self._check))

    def stop_check(self) -> None:
        if self._check_task is not None:
            self._check_task.cancel()
            self._check_task = None
        self.level_watch.stop()

    async def _run_check(self, check: MicrophoneCheck) -> None:
        try:
            await check.run()
        except MicrophoneUnavailable as exc:
            self.mic_status.setText(_sentence(str(exc)))

    def _heard(self, level: AudioLevel) -> None:
        reading = self.level_watch.add(level)
        self.meter.show_reading(reading)
        if reading.no_sound:
            self.mic_status.setText("No sound yet: is the microphone muted, or is another one meant?")
        elif reading.peak_db > -40:
            self.mic_status.setText("The microphone hears you.")

    def _capture_status(self, status: CaptureStatus) -> None:
        if status.message:
            self.mic_status.setText(_sentence(status.message))

    def play(self) -> None:
        """Play the last seconds the microphone heard on the default output."""
        if self._check is None:
            return
        audio = self._check.recording()
        self.play_button.setEnabled(False)
        self.mic_status.setText(f"Playing {len(audio) / 16000:.1f} s…")
        self._spawn(self._play(audio))

    async def _play(self, audio: np.ndarray) -> None:
        try:
            await Playback().play(Speech(audio, SAMPLE_RATE))
            self.mic_status.setText(f"Played {len(audio) / 16000:.1f} s on the default output.")
        except PlaybackUnavailable as exc:
            self.mic_status.setText(_sentence(str(exc)))
        finally:
            self.play_button.setEnabled(True)

    # -- the engine -------------------------------------------------------------------------

    def _follow_engine(self) -> None:
        remote = self.remote.isChecked()
        for widget in (self.server_url, self.test_button):
            widget.setEnabled(remote)

    def test_connection(self) -> None:
        """Connect to the server in the URL field, as the engine would, and say how it went."""
        choice = self.settings().engine
        choice.kind = EngineKind.REMOTE
        self.test_button.setEnabled(False)
        self.server_status.setText(f"Connecting to {choice.server_url}…")
        self._spawn(self._test(choice))

    async def _test(self, choice: EngineSettings) -> None:
        try:
            reached = await check_server(choice)
            self.server_status.setText(_sentence(reached))
        except VoxdeskError as exc:
            self.server_status.setText(_sentence(str(exc)))
        finally:
            self.test_button.setEnabled(self.remote.isChecked())

    def settings(self) -> Settings:
        """The settings with the choices made here."""
        result = copy.deepcopy(self._settings)
        result.audio.device = self.device.currentData()
        result.engine.kind = next(k for k, button in self._engine_buttons.items() if button.isChecked())
        result.engine.server_url = self.server_url.text().strip()
        if self.llm_box.isChecked():
            result.actions = self.llm.action_settings()
        return result

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._check_task is None:
            self.start_check()

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]
