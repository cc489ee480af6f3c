"""The Assistant page of the settings: the LLM Voxdesk asks (to clean up dictation, edit and
answer by voice, and pick a command when no phrase matches), an OpenAI-compatible server or
vLLM in this process, with a test that says what the server answered or whether the model loaded."""

from __future__ import annotations

import asyncio
import copy

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QWidget,
)

from voxdesk.app.llm.client import LlmError
from voxdesk.app.llm.runtime import llm_for
from voxdesk.app.settings import ActionSettings

__all__ = ["LlmPage"]

_HINT = (
    "Any OpenAI-compatible server. Start one, then put its URL here:\n"
    "Ollama: ollama pull llama3.2  →  http://127.0.0.1:11434/v1\n"
    "llama.cpp: llama-server -m MODEL.gguf --port 8080 --jinja  →  http://127.0.0.1:8080/v1\n"
    "vLLM: vllm serve MODEL --port 8000 --enable-auto-tool-choice --tool-call-parser hermes  →  "
    "http://127.0.0.1:8000/v1\n"
    "Or, on a machine with vLLM (local GPU mode), a model loaded by Voxdesk itself beside the speech model."
)
_RUNTIMES = {"server": "An OpenAI-compatible server", "vllm": "vLLM in this process"}
_TEST_BUDGET_S = 10.0
_LOAD_BUDGET_S = 600.0  # a model loaded in this process may first be downloaded


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
        self.runtime = QComboBox()
        self.runtime.setAccessibleName("Where the LLM runs")
        for name, label in _RUNTIMES.items():
            self.runtime.addItem(label, name)
        self.runtime.setCurrentIndex(max(0, self.runtime.findData(settings.llm_runtime)))
        self.runtime.currentIndexChanged.connect(self._show_runtime)
        form.addRow("&Runs on", self.runtime)
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
        self.tool_parser = QLineEdit(settings.llm_tool_parser)
        self.tool_parser.setAccessibleName("Tool-call parser")
        self.tool_parser.setToolTip("what vllm serve's --tool-call-parser takes for this model: hermes for Qwen")
        form.addRow("Tool-call &parser", self.tool_parser)
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
        self._show_runtime()

    def _show_runtime(self) -> None:
        in_process = self.runtime.currentData() == "vllm"
        self.url.setEnabled(not in_process)
        self.api_key.setEnabled(not in_process)
        self.tool_parser.setEnabled(in_process)
        self.model.setPlaceholderText(
            "a folder or hub id, e.g. Qwen/Qwen2.5-1.5B-Instruct" if in_process else "empty: the server's only model"
        )

    def action_settings(self) -> ActionSettings:
        """The ``[actions]`` settings with the LLM fields edited here."""
        result = copy.deepcopy(self._settings)
        result.llm_runtime = str(self.runtime.currentData())
        result.llm_tool_parser = self.tool_parser.text().strip() or "hermes"
        result.llm_url = self.url.text().strip()
        result.llm_model = self.model.text().strip()
        result.llm_api_key = self.api_key.text()
        result.llm_timeout_s = self.budget.value()
        result.llm_fallback = self.pick_commands.isChecked()
        return result

    def test_connection(self) -> None:
        """Ask the server for its models, or load the model in this process, and say what happened."""
        self.test_button.setEnabled(False)
        settings = self.action_settings()
        loading = settings.llm_runtime == "vllm"
        self.status.setText(f"Loading {settings.llm_model}…" if loading else f"Asking {settings.llm_url}…")
        task = asyncio.ensure_future(self._test(settings))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _test(self, settings: ActionSettings) -> None:
        llm = llm_for(settings)
        in_process = settings.llm_runtime == "vllm"
        try:
            models = await llm.models(_LOAD_BUDGET_S if in_process else _TEST_BUDGET_S)
        except LlmError as error:
            self.status.setText(str(error)[:1].upper() + str(error)[1:])
        else:
            self.status.setText(
                f"Loaded {settings.llm_model} in this process" if in_process else _answer(models, settings.llm_model)
            )
        finally:
            await llm.aclose()
            self.test_button.setEnabled(True)


def _answer(models: list[str], wanted: str) -> str:
    """What the server offers, and whether the model named is among them."""
    offered = ", ".join(models) or "none"
    if wanted and wanted not in models:
        return f"The server answered, but has no model {wanted!r}; it offers: {offered}"
    if not wanted and len(models) != 1:
        return f"The server offers {len(models)} models; name one: {offered}"
    return f"Connected: the server offers {offered}"
