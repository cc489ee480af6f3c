"""The LLM's uses against real vLLM: its OpenAI-compatible server on a tiny random-weight chat
model (tests/llm_support.py), reached through the official SDK as Voxdesk reaches any server.

The model's words are nonsense, so these check the mechanics: the cleanup's structured output
parses and is what gets typed, a tool call maps to one of the commands, the connection test
lists the served model."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.app.actions.fakes import RecordingKeyboard, RecordingLauncher, RecordingOpener, StaticProbe
from tests.llm_support import CHAT_MODEL_NAME
from tests.vllm_support import requires_vllm
from voxdesk.app.actions.center import ActionCenter, ActionStatus
from voxdesk.app.actions.commands import CommandSource
from voxdesk.app.actions.llm_fallback import LlmFallback
from voxdesk.app.actions.services import Services
from voxdesk.app.llm.cleanup import CLEANUP_SCHEMA, cleanup_messages
from voxdesk.app.llm.client import OpenAiCompatibleLlm
from voxdesk.app.llm.question import answer_question
from voxdesk.app.settings import ActionSettings, WritingSettings
from voxdesk.app.writing.modes import CleanupStyle

pytestmark = [pytest.mark.vllm, requires_vllm]


def test_the_connection_test_lists_the_served_model(llm_server: str) -> None:
    assert asyncio.run(OpenAiCompatibleLlm(llm_server).models(30)) == [CHAT_MODEL_NAME]


def test_a_streamed_answer_with_a_schema_parses_and_counts_its_tokens(llm_server: str) -> None:
    llm = OpenAiCompatibleLlm(llm_server)  # no model named: the server's only one
    messages = cleanup_messages("um so meet at 4 PM", CleanupStyle.LIGHT)
    reply = asyncio.run(llm.chat(messages, 30, schema=CLEANUP_SCHEMA, max_tokens=64))
    assert isinstance(json.loads(reply.text)["text"], str)
    assert reply.first_token_s is not None and 0 < reply.first_token_s <= reply.total_s
    assert reply.tokens_in and reply.tokens_out and llm.model == CHAT_MODEL_NAME


def test_the_clean_mode_types_what_vllm_cleaned(tmp_path: Path, llm_server: str) -> None:
    keyboard = RecordingKeyboard()
    services = Services(
        open_url=RecordingOpener(), launcher=RecordingLauncher(), keyboard=keyboard, focus=StaticProbe(None)
    )
    settings = ActionSettings(mode="dictation", llm_url=llm_server, llm_model=CHAT_MODEL_NAME, llm_timeout_s=30)
    center = ActionCenter(
        settings, services, commands=CommandSource(user_path=tmp_path / "c.toml"), writing=WritingSettings(mode="clean")
    )
    record = asyncio.run(center.handle_utterance("um so meet at three thirty pm", utterance_id=1))
    assert record is not None and record.status is ActionStatus.DONE, record
    assert "not cleaned up" not in record.message, record.message
    typed = keyboard.text.strip()
    assert typed and typed != "um so meet at 3:30 PM" and f"“{typed}” (clean mode)" in record.preview


def test_a_tool_call_from_vllm_maps_to_one_of_the_commands(tmp_path: Path, llm_server: str) -> None:
    commands = CommandSource(user_path=tmp_path / "c.toml").commands()
    warnings: list[str] = []
    settings = ActionSettings(llm_fallback=True, llm_url=llm_server, llm_model=CHAT_MODEL_NAME, llm_timeout_s=30)
    match = asyncio.run(LlmFallback(settings, warnings.append).pick("could you put on something relaxing", commands))
    assert match is not None, warnings
    assert match.command in commands and match.phrase == "llm"
    assert set(match.slots) <= set(match.command.slots) and match.command.required_slots <= set(match.slots)


def test_an_edit_by_voice_is_rewritten_by_vllm(tmp_path: Path, llm_server: str) -> None:
    keyboard = RecordingKeyboard()
    services = Services(
        open_url=RecordingOpener(), launcher=RecordingLauncher(), keyboard=keyboard, focus=StaticProbe(None)
    )
    settings = ActionSettings(mode="dictation", llm_url=llm_server, llm_model=CHAT_MODEL_NAME, llm_timeout_s=30)
    center = ActionCenter(settings, services, commands=CommandSource(user_path=tmp_path / "c.toml"))

    async def scenario() -> None:
        await center.handle_utterance("The meeting moves to Friday.")
        edit = await center.handle_utterance("make that shorter")
        assert edit is not None and edit.status is ActionStatus.DONE, edit
        assert keyboard.text.strip() and keyboard.text != "The meeting moves to Friday. "
        await center.undo(edit.id)
        assert keyboard.text == "The meeting moves to Friday. "

    asyncio.run(scenario())


def test_a_question_is_answered_by_vllm_as_a_short_text(llm_server: str) -> None:
    llm = OpenAiCompatibleLlm(llm_server, CHAT_MODEL_NAME)
    answer = asyncio.run(answer_question(llm, "What is the capital of Portugal?", 30))
    assert answer.strip() and len(answer) < 600
