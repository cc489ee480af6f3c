"""Dictation cleaned up by an LLM in the mode's style, and every way that can go wrong: each
keeps the text as heard and says why. Against a fake server (tests/fake_llm.py) that answers
what a test scripts; the same path against real vLLM is in test_cleanup_vllm.py."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from pathlib import Path

import pytest

from tests.app.actions.fakes import RecordingKeyboard, RecordingLauncher, RecordingOpener, StaticProbe
from tests.fake_llm import FakeLlm
from voxdesk.app.actions.center import ActionCenter, ActionStatus
from voxdesk.app.actions.commands import CommandSource
from voxdesk.app.actions.services import Services
from voxdesk.app.llm.cleanup import CLEANUP_SCHEMA, cleanup_messages
from voxdesk.app.settings import ActionSettings, WritingSettings
from voxdesk.app.writing.modes import CleanupStyle
from voxdesk.app.writing.user_mode import user_mode

SAID = "um so meet at three thirty pm comma I mean four pm"
AS_HEARD = "um so meet at 3:30 PM, I mean 4 PM"  # the clean mode's formatting, before the LLM


def dictate(
    tmp_path: Path, url: str, text: str = SAID, budget_s: float = 5.0, mode: str = "clean"
) -> tuple[ActionCenter, RecordingKeyboard]:
    keyboard = RecordingKeyboard()
    services = Services(
        open_url=RecordingOpener(), launcher=RecordingLauncher(), keyboard=keyboard, focus=StaticProbe(None)
    )
    settings = ActionSettings(mode="dictation", llm_url=url, llm_model="fake-model", llm_timeout_s=budget_s)
    center = ActionCenter(
        settings,
        services,
        commands=CommandSource(user_path=tmp_path / "c.toml"),
        writing=WritingSettings(mode=mode, vocabulary=["Xochitl"]),
    )
    record = asyncio.run(center.handle_utterance(text, utterance_id=1))
    assert record is not None and record.status is ActionStatus.DONE, record
    return center, keyboard


def test_the_clean_mode_types_what_the_llm_cleaned_and_undo_types_it_as_heard(
    tmp_path: Path, fake_llm: FakeLlm
) -> None:
    fake_llm.content = json.dumps({"text": "Meet at 4 PM."})
    center, keyboard = dictate(tmp_path, fake_llm.url)
    assert keyboard.text == "Meet at 4 PM. "
    (record,) = center.records
    assert "(clean mode)" in record.preview and "Meet at 4 PM." in record.preview
    assert "typed as heard" not in record.message
    (request,) = fake_llm.requests
    assert request["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "answer", "schema": CLEANUP_SCHEMA},
    }
    assert request["messages"][1] == {"role": "user", "content": AS_HEARD}
    assert "Xochitl" in request["messages"][0]["content"] and request["stream"] is True
    undone = asyncio.run(center.undo(record.id))
    assert undone.status is ActionStatus.UNDONE and keyboard.text == AS_HEARD + " "


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ("Sure! Here is the cleaned text: Meet at 4 PM.", "the LLM's answer is not JSON with a text"),
        (json.dumps({"cleaned": "Meet at 4 PM."}), "the LLM's answer is not JSON with a text"),
        (json.dumps({"text": "  "}), "the LLM answered an empty text"),
        (json.dumps({"text": "Meet at 4 PM. " * 20}), "the LLM wrote 280 characters for 34"),
    ],
)
def test_an_answer_that_is_not_a_cleaned_text_leaves_the_text_as_heard(
    tmp_path: Path, fake_llm: FakeLlm, answer: str, why: str
) -> None:
    fake_llm.content = answer
    center, keyboard = dictate(tmp_path, fake_llm.url)
    assert keyboard.text == AS_HEARD + " "
    (record,) = center.records
    assert f"(not cleaned up: {why}" in record.message and record.message.endswith("; typed as heard)")


def test_a_slow_llm_is_given_up_within_the_budget_and_the_text_as_heard_typed(
    tmp_path: Path, fake_llm: FakeLlm
) -> None:
    fake_llm.content, fake_llm.delay = json.dumps({"text": "too late"}), 3.0
    started = time.monotonic()
    center, keyboard = dictate(tmp_path, fake_llm.url, budget_s=0.5)
    assert time.monotonic() - started < 2.0 and keyboard.text == AS_HEARD + " "
    assert (
        f"not cleaned up: the LLM at {fake_llm.url} did not answer within 0.5 s; typed as heard"
        in center.records[0].message
    )


def test_a_server_nobody_runs_leaves_the_text_as_heard(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    center, keyboard = dictate(tmp_path, url)
    assert keyboard.text == AS_HEARD + " "
    assert f"not cleaned up: could not reach the LLM at {url}" in center.records[0].message


def test_a_mode_that_types_live_is_not_cleaned_up_and_says_why(tmp_path: Path, fake_llm: FakeLlm) -> None:
    settings = WritingSettings(mode="prose", cleanup={"prose": "light"})
    mode, problems = user_mode(settings, "prose")
    assert (mode.cleanup, mode.live_typing, problems) == (CleanupStyle.LIGHT, True, [])
    keyboard = RecordingKeyboard()
    services = Services(
        open_url=RecordingOpener(), launcher=RecordingLauncher(), keyboard=keyboard, focus=StaticProbe(None)
    )
    center = ActionCenter(
        ActionSettings(mode="dictation", llm_url=fake_llm.url),
        services,
        commands=CommandSource(user_path=tmp_path / "c.toml"),
        writing=settings,
    )
    asyncio.run(center.handle_utterance("three thirty pm", utterance_id=1))
    assert keyboard.text == "3:30 PM " and fake_llm.requests == []
    assert "not cleaned up: the prose mode types while you speak; typed as heard" in center.records[0].message


def test_cleanup_settings_per_mode_and_their_mistakes() -> None:
    settings = WritingSettings(
        cleanup={"message": "custom", "code": "sparkly", "prose": "formal", "poetry": "light"},
        cleanup_prompts={"message": "Write it as a friendly chat message."},
    )
    message, problems = user_mode(settings, "message")
    assert (message.cleanup, message.cleanup_prompt) == (CleanupStyle.CUSTOM, "Write it as a friendly chat message.")
    assert problems == ["ignored the cleanup of mode 'poetry': it is not one of plain, prose, clean, message, code"]
    assert user_mode(settings, "prose")[0].cleanup is CleanupStyle.FORMAL
    code, problems = user_mode(settings, "code")
    assert code.cleanup is CleanupStyle.NONE
    assert problems[-1] == "ignored writing.cleanup.code: 'sparkly' is not one of none, light, formal, custom"
    lonely = WritingSettings(cleanup={"plain": "custom"})
    assert user_mode(lonely, "plain")[1] == [
        "ignored writing.cleanup.plain: custom needs writing.cleanup_prompts.plain"
    ]
    assert user_mode(WritingSettings(), "clean")[0].cleanup is CleanupStyle.LIGHT


def test_the_prompt_carries_the_style_the_vocabulary_and_the_app() -> None:
    system, user = cleanup_messages("uh hi", CleanupStyle.CUSTOM, "Write like a pirate.", ("Xochitl",), "Slack")
    assert user == {"role": "user", "content": "uh hi"}
    assert (
        "Write like a pirate." in system["content"] and "Xochitl" in system["content"] and "Slack" in system["content"]
    )
    assert "filler" in cleanup_messages("uh hi", CleanupStyle.LIGHT)[0]["content"]
