"""The LLM's uses against real vLLM in both runtimes Voxdesk has: its OpenAI-compatible server on a
tiny random-weight chat model (tests/llm_support.py), reached through the official SDK as
Voxdesk reaches any server, and the same model in vLLM's ``AsyncLLM`` in this process.

The model's words are nonsense, so these check the mechanics: the cleanup's structured output
parses and is what gets typed, a tool call maps to one of the commands, an edit is replaced and
undone, the connection test lists the model, and a budget too short types the text as heard."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.app.actions.fakes import RecordingKeyboard, RecordingLauncher, RecordingOpener, StaticProbe
from tests.conftest import ChatRuntime
from tests.vllm_support import requires_vllm
from voxdesk.app.actions.center import ActionCenter, ActionStatus
from voxdesk.app.actions.commands import CommandSource
from voxdesk.app.actions.llm_fallback import LlmFallback
from voxdesk.app.actions.services import Services
from voxdesk.app.llm.cleanup import CLEANUP_SCHEMA, cleanup_messages
from voxdesk.app.llm.question import answer_question
from voxdesk.app.settings import ActionSettings, WritingSettings
from voxdesk.app.writing.modes import CleanupStyle

pytestmark = [pytest.mark.vllm, requires_vllm]


def _center(tmp_path: Path, runtime: ChatRuntime, keyboard: RecordingKeyboard, mode: str = "plain") -> ActionCenter:
    services = Services(
        open_url=RecordingOpener(), launcher=RecordingLauncher(), keyboard=keyboard, focus=StaticProbe(None)
    )
    settings = ActionSettings(mode="dictation", llm_timeout_s=30)
    commands = CommandSource(user_path=tmp_path / "c.toml")
    return ActionCenter(settings, services, commands=commands, writing=WritingSettings(mode=mode), llm=runtime.llm)


def test_the_connection_test_lists_the_model(chat_runtime: ChatRuntime) -> None:
    assert chat_runtime.run(chat_runtime.llm.models(30)) == [chat_runtime.model]


def test_a_streamed_answer_with_a_schema_parses_and_counts_its_tokens(chat_runtime: ChatRuntime) -> None:
    messages = cleanup_messages("um so meet at 4 PM", CleanupStyle.LIGHT)
    reply = chat_runtime.run(chat_runtime.llm.chat(messages, 30, schema=CLEANUP_SCHEMA, max_tokens=64))
    assert isinstance(json.loads(reply.text)["text"], str)
    assert reply.first_token_s is not None and 0 < reply.first_token_s <= reply.total_s
    assert reply.tokens_in and reply.tokens_out


def test_the_clean_mode_types_what_vllm_cleaned(tmp_path: Path, chat_runtime: ChatRuntime) -> None:
    keyboard = RecordingKeyboard()
    center = _center(tmp_path, chat_runtime, keyboard, mode="clean")
    record = chat_runtime.run(center.handle_utterance("um so meet at three thirty pm", utterance_id=1))
    assert record is not None and record.status is ActionStatus.DONE, record
    assert "not cleaned up" not in record.message, record.message
    typed = keyboard.text.strip()
    assert typed and typed != "um so meet at 3:30 PM" and f"“{typed}” (clean mode)" in record.preview


def test_a_budget_too_short_types_the_text_as_heard_and_says_so(tmp_path: Path, chat_runtime: ChatRuntime) -> None:
    keyboard = RecordingKeyboard()
    center = _center(tmp_path, chat_runtime, keyboard, mode="clean")
    center.settings.llm_timeout_s = 0.001  # no model answers this fast: the fallback, on a model that works
    record = chat_runtime.run(center.handle_utterance("um so meet at three thirty pm", utterance_id=1))
    assert record is not None and record.status is ActionStatus.DONE, record
    assert "not cleaned up" in record.message and "did not answer within 0.001 s" in record.message, record.message
    assert keyboard.text.strip() == "um so meet at 3:30 PM"


def test_a_tool_call_from_vllm_maps_to_one_of_the_commands(tmp_path: Path, chat_runtime: ChatRuntime) -> None:
    commands = CommandSource(user_path=tmp_path / "c.toml").commands()
    warnings: list[str] = []
    settings = ActionSettings(llm_fallback=True, llm_timeout_s=30)
    fallback = LlmFallback(settings, warnings.append, llm=chat_runtime.llm)
    found = chat_runtime.run(fallback.pick("could you put on something relaxing", commands))
    assert found, warnings
    for match in found:
        assert match.command in commands and match.phrase == "llm"
        assert set(match.slots) <= set(match.command.slots) and match.command.required_slots <= set(match.slots)


def test_an_edit_by_voice_is_rewritten_by_vllm(tmp_path: Path, chat_runtime: ChatRuntime) -> None:
    keyboard = RecordingKeyboard()
    center = _center(tmp_path, chat_runtime, keyboard)

    async def scenario() -> None:
        await center.handle_utterance("The meeting moves to Friday.")
        edit = await center.handle_utterance("make that shorter")
        assert edit is not None and edit.status is ActionStatus.DONE, edit
        assert keyboard.text.strip() and keyboard.text != "The meeting moves to Friday. "
        await center.undo(edit.id)
        assert keyboard.text == "The meeting moves to Friday. "

    chat_runtime.run(scenario())


def test_a_question_is_answered_by_vllm_as_a_short_text(chat_runtime: ChatRuntime) -> None:
    answer = chat_runtime.run(answer_question(chat_runtime.llm, "What is the capital of Portugal?", 30))
    assert answer.strip() and len(answer) < 600
