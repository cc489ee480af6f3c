"""The Assistant page of the settings: the LLM's fields come back, and the connection test says
what the server answered (a fake OpenAI-compatible server on loopback, and a port nobody serves;
real vLLM answers it in tests/app/llm)."""

from __future__ import annotations

import asyncio
import socket

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from tests.fake_llm import FakeLlm
from voxdesk.app.settings import Settings
from voxdesk.ui.settings_dialog import SettingsDialog


def test_the_llm_fields_come_back_from_the_dialog(qtbot: QtBot) -> None:
    dialog = SettingsDialog(Settings(), [])
    qtbot.addWidget(dialog)
    page = dialog.llm
    page.url.setText(" http://127.0.0.1:11434/v1 ")
    page.model.setText("llama3.2")
    page.api_key.setText("sekrit")
    page.budget.setValue(2.5)
    page.pick_commands.setChecked(True)
    actions = dialog.settings().actions
    assert (actions.llm_url, actions.llm_model, actions.llm_api_key) == (
        "http://127.0.0.1:11434/v1",
        "llama3.2",
        "sekrit",
    )
    assert actions.llm_timeout_s == 2.5 and actions.llm_fallback and actions.mode == "command"


def test_vllm_in_this_process_takes_a_model_and_a_tool_parser_instead_of_a_server(qtbot: QtBot) -> None:
    dialog = SettingsDialog(Settings(), [])
    qtbot.addWidget(dialog)
    page = dialog.llm
    assert page.url.isEnabled() and not page.tool_parser.isEnabled()
    page.runtime.setCurrentIndex(page.runtime.findData("vllm"))
    assert not page.url.isEnabled() and not page.api_key.isEnabled() and page.tool_parser.isEnabled()
    assert "hub id" in page.model.placeholderText()
    page.model.setText("Qwen/Qwen2.5-1.5B-Instruct")
    page.tool_parser.setText("hermes")
    actions = dialog.settings().actions
    assert (actions.llm_runtime, actions.llm_model, actions.llm_tool_parser) == (
        "vllm",
        "Qwen/Qwen2.5-1.5B-Instruct",
        "hermes",
    )


def test_the_connection_test_says_what_the_server_answered(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, fake_llm: FakeLlm
) -> None:
    dialog = SettingsDialog(Settings(), [])
    qtbot.addWidget(dialog)
    page = dialog.llm
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{unused.getsockname()[1]}/v1"
    page.url.setText(closed)
    qtbot.mouseClick(page.test_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(
        lambda: page.test_button.isEnabled() and page.status.text().startswith("Could not reach"), timeout=15_000
    )
    assert closed in page.status.text()
    page.url.setText(fake_llm.url)
    qtbot.mouseClick(page.test_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.status.text() == "Connected: the server offers fake-model", timeout=15_000)
    page.model.setText("llama3.2")
    qtbot.mouseClick(page.test_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "has no model 'llama3.2'; it offers: fake-model" in page.status.text(), timeout=15_000)
