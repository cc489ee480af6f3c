"""The settings dialog: microphone, engine, server, silence length, shortcuts."""

from __future__ import annotations

import copy

from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QKeySequenceEdit,
    QLabel,
    QLineEdit,
    QSpinBox,
    QWidget,
)

from voxdesk.app.settings import Settings
from voxdesk.engine.kinds import EngineKind

ENGINE_LABELS = {
    EngineKind.BUILTIN: "Built-in CPU engine",
    EngineKind.VLLM: "Local GPU (vLLM)",
    EngineKind.REMOTE: "Remote server (/v1/realtime)",
}
DEFAULT_DEVICE_LABEL = "System default"


class SettingsDialog(QDialog):
    """Edits a copy of the settings; :meth:`settings` returns it after ``accept``."""

    def __init__(
        self, settings: Settings, devices: list[str], shortcut_note: str = "", parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Voxdesk settings")
        self._settings = copy.deepcopy(settings)
        form = QFormLayout(self)

        self.device = QComboBox()
        self.device.setAccessibleName("Microphone")
        self.device.addItem(DEFAULT_DEVICE_LABEL, "")
        for name in devices:
            self.device.addItem(name, name)
        if settings.audio.device and settings.audio.device not in devices:
            self.device.addItem(f"{settings.audio.device} (not connected)", settings.audio.device)
        self.device.setCurrentIndex(max(0, self.device.findData(settings.audio.device)))
        form.addRow("&Microphone", self.device)

        self.engine = QComboBox()
        self.engine.setAccessibleName("Speech engine")
        for kind, label in ENGINE_LABELS.items():
            self.engine.addItem(label, kind)
        self.engine.setCurrentIndex(self.engine.findData(settings.engine.kind))
        form.addRow("&Engine", self.engine)

        self.vllm_model = QLineEdit(settings.engine.vllm_model)
        self.vllm_model.setAccessibleName("vLLM model")
        form.addRow("vLLM &model", self.vllm_model)

        self.server_url = QLineEdit(settings.engine.server_url)
        self.server_url.setAccessibleName("Server URL")
        self.server_url.setPlaceholderText("ws://host:8000")
        form.addRow("Server &URL", self.server_url)

        self.server_model = QLineEdit(settings.engine.server_model)
        self.server_model.setAccessibleName("Server model")
        self.server_model.setPlaceholderText("the server's only model")
        form.addRow("Server m&odel", self.server_model)

        self.api_key = QLineEdit(settings.engine.api_key)
        self.api_key.setAccessibleName("API key")
        self.api_key.setEchoMode(QLineEdit.EchoMode.Password)
        form.addRow("API &key", self.api_key)

        self.silence = QSpinBox()
        self.silence.setAccessibleName("Silence that ends an utterance, in milliseconds")
        self.silence.setRange(200, 3000)
        self.silence.setSingleStep(50)
        self.silence.setSuffix(" ms")
        self.silence.setValue(settings.listening.silence_ms)
        form.addRow("&Silence that ends an utterance", self.silence)

        self.toggle_shortcut = QKeySequenceEdit(QKeySequence(settings.listening.toggle_shortcut))
        self.toggle_shortcut.setAccessibleName("Shortcut to start and stop listening")
        form.addRow("Start/stop &shortcut", self.toggle_shortcut)

        self.hold_key = QKeySequenceEdit(QKeySequence(settings.listening.hold_to_talk_key))
        self.hold_key.setAccessibleName("Hold-to-talk key")
        form.addRow("&Hold-to-talk key", self.hold_key)
        if shortcut_note:
            note = QLabel(shortcut_note)
            note.setWordWrap(True)
            form.addRow("", note)

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        self.engine.currentIndexChanged.connect(self._enable_engine_fields)
        self._enable_engine_fields()

    def _enable_engine_fields(self) -> None:
        kind = self.engine.currentData()
        self.vllm_model.setEnabled(kind == EngineKind.VLLM)
        for field in (self.server_url, self.server_model, self.api_key):
            field.setEnabled(kind == EngineKind.REMOTE)

    def settings(self) -> Settings:
        """The edited settings."""
        result = copy.deepcopy(self._settings)
        result.audio.device = self.device.currentData()
        result.engine.kind = EngineKind(self.engine.currentData())
        result.engine.vllm_model = self.vllm_model.text().strip()
        result.engine.server_url = self.server_url.text().strip()
        result.engine.server_model = self.server_model.text().strip()
        result.engine.api_key = self.api_key.text()
        result.listening.silence_ms = self.silence.value()
        result.listening.toggle_shortcut = self.toggle_shortcut.keySequence().toString()
        result.listening.hold_to_talk_key = self.hold_key.keySequence().toString()
        return result
