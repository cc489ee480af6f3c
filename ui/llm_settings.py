"""The Assistant page of the settings: the OpenAI-compatible LLM Voxdesk asks (to clean up
dictation, and to pick a command when no phrase matches), with a connection test that says
what the server answered."""

from __future__ import annotations

import asyncio
import copy

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QDoubleSpinBox, QFormLayout, QLabel, QLineEdit, QPushButton, QWidget

from voxdesk.app.llm.client import LlmError, OpenAiCompatibleLlm
from voxdesk.app.settings import ActionSettings

__all__ = ["LlmPage"]

_HINT = (
    "Any OpenAI-compatible server. Start one, then put its URL here:\n"
    "Ollama: ollama pull llama3.2  →  http://127.0.0.1:11434/v1\n"
    "llama.cpp: llama-server -m MODEL.gguf --port 8080 --jinja  →  http://127.0.0.1:8080/v1\n"
    "vLLM: vllm serve MODEL --port 8000 --enable-auto-tool-choice --tool-call-parser hermes  →  "
    "http://127.0.0.1:8000/v1"
)
_TEST_BUDGET_S = 10.0


class LlmPage(QWidget):
    """Edits a copy of the ``[actions]`` settings' LLM fields; :meth:`action_settings` returns it."""

    def __init__(self, settings: ActionSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._settings = copy.deepcopy(settings)
        self._tasks: set[asyncio.Task[None]] = set()
        form = QFormLayout(self)
        hint = QLabel(_HINT)
        hint.setWordWrap(True)
        hint.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)  # the commands can be copied
        form.addRow(hint)
        self.url = QLineEdit(settings.llm_url)
        self.url.setAccessibleName("LLM server URL")
        form.addRow("Server &URL", self.url)
        self.model = QLineEdit(settings.llm_model)
        self.model.setAccessibleName("LLM model")
        self.model.setPlaceholderText("empty: the server's only model")
        form.addRow("&Model", self.model)
        self.api_key = QLineEdit(settings.llm_api_key)
        self.api_key.setAccessibleName("LLM API key")
        self.api_key.setEchoMode(QLineEdit.EchoMode.Password)
        self.api_key.setPlaceholderText("empty for a local server")
        form.addRow("API &key", self.api_key)
        self.budget = QDoubleSpinBox()
        self.budget.setAccessibleName("Longest wait for the LLM, in seconds")
        self.budget.setRange(0.5, 60.0)
        self.budget.setSingleStep(0.5)
        self.budget.setSuffix(" s")
        self.budget.setValue(settings.llm_timeout_s)
        self.budget.setToolTip("Past this, dictation is typed as heard and the command is not guessed")
        form.addRow("Longest &wait", self.budget)
        self.pick_commands = QCheckBox("Ask it which command was meant when no phrase matches (it always asks first)")
        self.pick_commands.setAccessibleName("Let the LLM pick a command")
        self.pick_commands.setChecked(settings.llm_fallback)
        form.addRow("", self.pick_commands)
        self.test_button = QPushButton("&Test connection")
        self.test_button.clicked.connect(self.test_connection)
        self.status = QLabel()
        self.status.setAccessibleName("What the LLM server answered")
        self.status.setWordWrap(True)
        form.addRow(self.test_button, self.status)

    def action_settings(self) -> ActionSettings:
        """The ``[actions]`` settings with the LLM fields edited here."""
        result = copy.deepcopy(self._settings)
        result.llm_url = self.url.text().strip()
        result.llm_model = self.model.text().strip()
        result.llm_api_key = self.api_key.text()
        result.llm_timeout_s = self.budget.value()
        result.llm_fallback = self.pick_commands.isChecked()
        return result

    def test_connection(self) -> None:
        """Ask the server in the URL field for its models, and say what it answered."""
        self.test_button.setEnabled(False)
        self.status.setText(f"Asking {self.url.text().strip()}…")
        task = asyncio.ensure_future(self._test(self.action_settings()))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _test(self, settings: ActionSettings) -> None:
        llm = OpenAiCompatibleLlm(settings.llm_url, settings.llm_model, settings.llm_api_key)
        try:
            models = await llm.models(_TEST_BUDGET_S)
        except LlmError as error:
            self.status.setText(str(error)[:1].upper() + str(error)[1:])
        else:
            self.status.setText(_answer(models, settings.llm_model))
        finally:
            self.test_button.setEnabled(True)


def _answer(models: list[str], wanted: str) -> str:
    """What the server offers, and whether the model named is among them."""
    offered = ", ".join(models) or "none"
    if wanted and wanted not in models:
        return f"The server answered, but has no model {wanted!r}; it offers: {offered}"
    if not wanted and len(models) != 1:
        return f"The server offers {len(models)} models; name one: {offered}"
    return f"Connected: the server offers {offered}"
