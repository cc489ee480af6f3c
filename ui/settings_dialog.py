"""The settings dialog: microphone, engine (Whisper model, language, device), server, silence
length and shortcuts on its General page; modes, vocabulary and replacements on its Writing
page; the LLM on its Assistant page."""

from __future__ import annotations

import copy

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QKeySequenceEdit,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from voxdesk.app.settings import EngineSettings, Settings
from voxdesk.engine.kinds import EngineKind
from voxdesk.engine.remote.openai import OPENAI_REALTIME_URL
from voxdesk.engine.vllm.models import REALTIME_MODELS
from voxdesk.engine.whisper.catalog import ModelChoice, language_codes
from voxdesk.ui.llm_settings import LlmPage
from voxdesk.ui.voice_settings import VoicePage
from voxdesk.ui.writing_settings import WritingPage

ENGINE_LABELS = {
    EngineKind.BUILTIN: "Built-in CPU engine",
    EngineKind.VLLM: "Local GPU (vLLM)",
    EngineKind.REMOTE: "Remote server (/v1/realtime)",
}
SERVER_DIALECT_LABELS = {"vllm": "vLLM / Voxdesk", "openai": "OpenAI Realtime"}
DEFAULT_URLS = {"vllm": EngineSettings().server_url, "openai": OPENAI_REALTIME_URL}
DEFAULT_DEVICE_LABEL = "System default"
WHISPER_DEVICE_LABELS = {
    "auto": "Automatic (NVIDIA GPU when there is one, else CPU)",
    "cpu": "CPU",
    "cuda": "NVIDIA GPU (CUDA)",
}


class SettingsDialog(QDialog):
    """Edits a copy of the settings; :meth:`settings` returns it after ``accept``."""

    def __init__(
        self,
        settings: Settings,
        devices: list[str],
        shortcut_note: str = "",
        parent: QWidget | None = None,
        models: list[ModelChoice] | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Voxdesk settings")
        self._settings = copy.deepcopy(settings)
        general = QWidget()
        form = QFormLayout(general)

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

        self._add_whisper_rows(form, settings, models or [])

        self._add_vllm_row(form, settings)

        self.server_dialect = QComboBox()
        self.server_dialect.setAccessibleName("Server kind")
        for dialect, label in SERVER_DIALECT_LABELS.items():
            self.server_dialect.addItem(label, dialect)
        self.server_dialect.setCurrentIndex(max(0, self.server_dialect.findData(settings.engine.server_dialect)))
        form.addRow("Server ki&nd", self.server_dialect)

        self.server_url = QLineEdit(settings.engine.server_url)
        self.server_url.setAccessibleName("Server URL")
        form.addRow("Server &URL", self.server_url)

        self.server_model = QLineEdit(settings.engine.server_model)
        self.server_model.setAccessibleName("Server model")
        form.addRow("Server m&odel", self.server_model)

        self.api_key = QLineEdit(settings.engine.api_key)
        self.api_key.setAccessibleName("API key")
        self.api_key.setEchoMode(QLineEdit.EchoMode.Password)
        form.addRow("API &key", self.api_key)

        self.keys_in_file = QCheckBox("Store API keys in settings.toml in plain text, not in the system keyring")
        self.keys_in_file.setAccessibleName("Store API keys in the settings file")
        self.keys_in_file.setChecked(settings.keys.store_in_file)
        form.addRow("", self.keys_in_file)

        self.silence = QSpinBox()
        self.silence.setAccessibleName("Silence that ends an utterance, in milliseconds")
        self.silence.setRange(200, 3000)
        self.silence.setSingleStep(50)
        self.silence.setSuffix(" ms")
        self.silence.setValue(settings.listening.silence_ms)
        form.addRow("&Silence that ends an utterance", self.silence)

        self.toggle_shortcut = QKeySequenceEdit(QKeySequence(settings.listening.toggle_shortcut))
        self.toggle_shortcut.setAccessibleName("Shortcut to start and stop listening")
        form.addRow("Start/stop shor&tcut", self.toggle_shortcut)

        self.hold_key = QKeySequenceEdit(QKeySequence(settings.listening.hold_to_talk_key))
        self.hold_key.setAccessibleName("Hold-to-talk key")
        form.addRow("&Hold-to-talk key", self.hold_key)
        self.overlay = QCheckBox("Show the text in a small box on top while a shortcut dictates")
        self.overlay.setAccessibleName("Dictation overlay")
        self.overlay.setChecked(settings.listening.overlay)
        form.addRow("", self.overlay)
        if shortcut_note:
            note = QLabel(shortcut_note)
            note.setWordWrap(True)
            form.addRow("", note)

        self.writing = WritingPage(settings.writing)
        self.llm = LlmPage(settings.actions)
        self.pages = QTabWidget()
        self.pages.addTab(general, "&General")
        self.pages.addTab(self.writing, "&Writing")
        self.pages.addTab(self.llm, "&Assistant")
        self.voice = VoicePage(settings.speech)
        self.pages.addTab(self.voice, "&Voice")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.pages)
        layout.addWidget(buttons)
        self.engine.currentIndexChanged.connect(self._enable_engine_fields)
        self.server_dialect.currentIndexChanged.connect(self._dialect_changed)
        self._enable_engine_fields()
        self._show_dialect_hints()

    def _add_whisper_rows(self, form: QFormLayout, settings: Settings, models: list[ModelChoice]) -> None:
        """The built-in engine's model (with size, languages, on disk or not), language and device."""
        self.whisper_model = QComboBox()
        self.whisper_model.setAccessibleName("Whisper model")
        for choice in models:
            self.whisper_model.addItem(choice.label, choice.name)
        self._select_model(settings.engine.whisper_model or "tiny.en")
        self.whisper_folder = QPushButton("Folder…")
        self.whisper_folder.setAccessibleName("Choose a Whisper model folder")
        self.whisper_folder.clicked.connect(self._choose_model_folder)
        row = QHBoxLayout()
        row.addWidget(self.whisper_model, 1)
        row.addWidget(self.whisper_folder)
        form.addRow("&Whisper model", row)
        buddy = form.labelForField(row)
        if isinstance(buddy, QLabel):
            buddy.setBuddy(self.whisper_model)

        self.language = QComboBox()
        self.language.setAccessibleName("Language")
        self.language.addItem("Detect for each utterance (auto)", "auto")
        for code in language_codes():
            self.language.addItem(code, code)
        self.language.setCurrentIndex(max(0, self.language.findData(settings.engine.language)))
        form.addRow("&Language", self.language)

        self.whisper_device = QComboBox()
        self.whisper_device.setAccessibleName("Device for the built-in engine")
        for device, label in WHISPER_DEVICE_LABELS.items():
            self.whisper_device.addItem(label, device)
        self.whisper_device.setCurrentIndex(max(0, self.whisper_device.findData(settings.engine.device)))
        form.addRow("&Device", self.whisper_device)

    def _add_vllm_row(self, form: QFormLayout, settings: Settings) -> None:
        """The vLLM engine's model: a known realtime model, any hub id typed in, or a folder."""
        self.vllm_model = QComboBox()
        self.vllm_model.setEditable(True)
        self.vllm_model.setAccessibleName("vLLM model")
        for model in REALTIME_MODELS:
            self.vllm_model.addItem(model.name)
            self.vllm_model.setItemData(self.vllm_model.count() - 1, model.description, Qt.ItemDataRole.ToolTipRole)
        self.vllm_model.setCurrentText(settings.engine.vllm_model)
        self.vllm_model.setToolTip("a realtime model vLLM supports: a hub id, or a folder")
        self.vllm_folder = QPushButton("Folder…")
        self.vllm_folder.setAccessibleName("Choose a vLLM model folder")
        self.vllm_folder.clicked.connect(self._choose_vllm_folder)
        row = QHBoxLayout()
        row.addWidget(self.vllm_model, 1)
        row.addWidget(self.vllm_folder)
        form.addRow("&vLLM model", row)
        buddy = form.labelForField(row)
        if isinstance(buddy, QLabel):
            buddy.setBuddy(self.vllm_model)

    def _choose_vllm_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "vLLM realtime model folder")
        if folder:
            self.vllm_model.setCurrentText(folder)

    def _select_model(self, name: str) -> None:
        if self.whisper_model.findData(name) < 0:
            self.whisper_model.addItem(name, name)  # a folder or a hub repository id
        self.whisper_model.setCurrentIndex(self.whisper_model.findData(name))

    def _choose_model_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "CTranslate2 Whisper model folder")
        if folder:
            self._select_model(folder)

    def _enable_engine_fields(self) -> None:
        kind = self.engine.currentData()
        builtin: list[QWidget] = [self.whisper_model, self.whisper_folder, self.language, self.whisper_device]
        for widget in builtin:
            widget.setEnabled(kind == EngineKind.BUILTIN)
        for vllm_field in (self.vllm_model, self.vllm_folder):
            vllm_field.setEnabled(kind == EngineKind.VLLM)
        for field in (self.server_dialect, self.server_url, self.server_model, self.api_key):
            field.setEnabled(kind == EngineKind.REMOTE)

    def _dialect_changed(self) -> None:
        """A URL left at the other kind's default (or empty) becomes this kind's default."""
        dialect = self.server_dialect.currentData()
        if self.server_url.text().strip() in ("", *DEFAULT_URLS.values()):
            self.server_url.setText(DEFAULT_URLS[dialect])
        self._show_dialect_hints()

    def _show_dialect_hints(self) -> None:
        if self.server_dialect.currentData() == "openai":
            self.server_url.setPlaceholderText(f"{OPENAI_REALTIME_URL}, or ws://host:8000/v1 for voxdesk serve")
            self.server_model.setPlaceholderText("e.g. gpt-4o-transcribe; empty: the server's default")
        else:
            self.server_url.setPlaceholderText("ws://host:8000 (several: comma-separated), tcp://host:10300 (Wyoming)")
            self.server_model.setPlaceholderText("the server's only model")

    def settings(self) -> Settings:
        """The edited settings."""
        result = copy.deepcopy(self._settings)
        result.audio.device = self.device.currentData()
        result.engine.kind = EngineKind(self.engine.currentData())
        result.engine.whisper_model = self.whisper_model.currentData()
        result.engine.language = self.language.currentData()
        result.engine.device = self.whisper_device.currentData()
        result.engine.vllm_model = self.vllm_model.currentText().strip()
        result.engine.server_dialect = self.server_dialect.currentData()
        result.engine.server_url = self.server_url.text().strip()
        result.engine.server_model = self.server_model.text().strip()
        result.engine.api_key = self.api_key.text()
        result.keys.store_in_file = self.keys_in_file.isChecked()
        result.listening.silence_ms = self.silence.value()
        result.listening.toggle_shortcut = self.toggle_shortcut.keySequence().toString()
        result.listening.hold_to_talk_key = self.hold_key.keySequence().toString()
        result.listening.overlay = self.overlay.isChecked()
        result.writing = self.writing.writing_settings()
        result.actions = self.llm.action_settings()
        result.speech = self.voice.speech_settings()
        return result
