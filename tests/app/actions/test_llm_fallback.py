"""The LLM intent fallback against a fake LLM: a tiny OpenAI-style server on loopback.

The fake streams whatever tool call the test scripts (invalid ones included, which a real
model's constrained decoding would not produce) and records the requests it got; the same
fallback against real vLLM serving a tiny model is in tests/app/llm.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from tests.app.actions.fakes import RecordingLauncher, RecordingOpener, not_understood
from tests.fake_llm import FakeLlm
from voxdesk.app.actions.center import ActionCenter, ActionStatus
from voxdesk.app.actions.commands import CommandSource
from voxdesk.app.actions.llm_fallback import LlmFallback, build_tools
from voxdesk.app.actions.services import Services
from voxdesk.app.llm.question import is_question
from voxdesk.app.settings import ActionSettings


def _center(tmp_path: Path, url: str, timeout: float = 5.0) -> tuple[ActionCenter, RecordingOpener]:
    settings = ActionSettings(
        llm_fallback=True, llm_url=url, llm_model="fake-model", llm_api_key="sekrit", llm_timeout_s=timeout
    )
    opener = RecordingOpener()
    services = Services(open_url=opener, launcher=RecordingLauncher())
    return ActionCenter(settings, services, commands=CommandSource(user_path=tmp_path / "c.toml")), opener


def test_a_valid_tool_call_waits_for_confirmation(tmp_path: Path, fake_llm: FakeLlm) -> None:
    fake_llm.tool_calls = [{"name": "search", "arguments": json.dumps({"query": "flights to Lisbon"})}]
    center, opener = _center(tmp_path, fake_llm.url)

    async def scenario() -> None:
        record = await center.handle_utterance("I'd love to know about flights to Lisbon")
        assert record is not None
        assert (record.command, record.slots, record.source) == ("search", {"query": "flights to Lisbon"}, "llm")
        assert record.status is ActionStatus.WAITING and record.needs_confirmation
        assert opener.urls == []
        await center.confirm(record.id)
        assert len(opener.urls) == 1 and "Lisbon" in opener.urls[0]

    asyncio.run(scenario())
    (request,) = fake_llm.requests
    assert request["path"] == "/v1/chat/completions" and request["model"] == "fake-model"
    assert request["tool_choice"] == "auto"
    assert {t["function"]["name"] for t in request["tools"]} == {c.name for c in center.commands}
    assert fake_llm.headers[0]["authorization"] == "Bearer sekrit"


def test_phrases_that_match_never_ask_the_llm(tmp_path: Path, fake_llm: FakeLlm) -> None:
    center, _ = _center(tmp_path, fake_llm.url)
    asyncio.run(center.handle_utterance("open the browser"))
    assert fake_llm.requests == []


def test_the_llm_is_off_by_default(tmp_path: Path, fake_llm: FakeLlm) -> None:
    center = ActionCenter(
        ActionSettings(llm_url=fake_llm.url), Services(), commands=CommandSource(user_path=tmp_path / "c.toml")
    )
    assert not_understood(asyncio.run(center.handle_utterance("tell me about flights")))
    assert fake_llm.requests == []


@pytest.mark.parametrize(
    "tool_call",
    [
        {"name": "format_disk", "arguments": "{}"},  # not a listed command
        {"name": "search", "arguments": "{}"},  # a required slot is missing
        {"name": "search", "arguments": '{"query": "x", "shell": "rm -rf ~"}'},  # an unknown parameter
        {"name": "timer", "arguments": '{"n": "five", "unit": "minutes"}'},  # not a number
        {"name": "timer", "arguments": '{"n": 5, "unit": "fortnights"}'},  # not one of the choices
        {"name": "press_keys", "arguments": '{"keys": "the any key"}'},  # not a key combination
        {"name": "search", "arguments": "{not json"},
        None,  # no tool call at all
    ],
)
def test_anything_else_is_no_match(tmp_path: Path, fake_llm: FakeLlm, tool_call: dict[str, Any] | None) -> None:
    fake_llm.tool_calls = [tool_call] if tool_call is not None else []
    center, _ = _center(tmp_path, fake_llm.url)
    record = asyncio.run(center.handle_utterance("do something unusual"))
    assert not_understood(record) and record is not None
    assert len(fake_llm.requests) == 1
    assert center.records == [record] and record.message == "no command matches it, nor did the LLM pick one"


def test_a_slow_server_is_no_match_within_the_limit(tmp_path: Path, fake_llm: FakeLlm) -> None:
    fake_llm.delay = 3.0
    fake_llm.tool_calls = [{"name": "search", "arguments": '{"query": "x"}'}]
    center, _ = _center(tmp_path, fake_llm.url, timeout=0.5)
    started = time.monotonic()
    assert not_understood(asyncio.run(center.handle_utterance("something slow")))
    assert time.monotonic() - started < 1.5
    assert any("did not answer within 0.5 s" in line for line in center.log)


def test_a_refused_connection_is_no_match_with_a_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    center, _ = _center(tmp_path, f"http://127.0.0.1:{port}/v1")
    with caplog.at_level("WARNING", logger="voxdesk.actions"):
        assert not_understood(asyncio.run(center.handle_utterance("something")))
    assert any("could not reach the LLM" in r.getMessage() for r in caplog.records)


def test_tools_describe_slots(command_source: CommandSource) -> None:
    tools = {t["function"]["name"]: t["function"] for t in build_tools(command_source.commands())}
    timer = tools["timer"]["parameters"]
    assert timer["properties"] == {
        "n": {"type": "number"},
        "unit": {"type": "string", "enum": ["minutes", "seconds", "hours"]},
    }
    assert timer["required"] == ["n", "unit"]
    assert tools["open_browser"]["parameters"]["properties"] == {}


def test_fallback_without_commands_asks_nothing(fake_llm: FakeLlm) -> None:
    settings = ActionSettings(llm_fallback=True, llm_url=fake_llm.url)
    assert asyncio.run(LlmFallback(settings).pick("hello", [])) == ()
    assert fake_llm.requests == []


def test_a_question_no_command_answers_is_put_to_the_llm_and_answered(tmp_path: Path, fake_llm: FakeLlm) -> None:
    fake_llm.content = json.dumps({"text": "Lisbon is the capital of Portugal."})
    center, _ = _center(tmp_path, fake_llm.url)
    record = asyncio.run(center.handle_utterance("What is the capital of Portugal?"))
    assert record is not None and (record.command, record.status) == ("question", ActionStatus.DONE)
    assert record.message == "Lisbon is the capital of Portugal." and record.source == "llm"
    picked, asked = fake_llm.requests  # the command table first (no tool was called), then the question
    assert "tools" in picked and "tools" not in asked
    assert asked["messages"][1]["content"] == "What is the capital of Portugal?"
    statement = asyncio.run(center.handle_utterance("I like the capital of Portugal"))
    assert not_understood(statement) and len(fake_llm.requests) == 3  # not a question: not asked


def test_a_question_the_llm_answers_badly_is_a_failed_record_saying_why(tmp_path: Path, fake_llm: FakeLlm) -> None:
    fake_llm.content = "Lisbon, of course!"
    center, _ = _center(tmp_path, fake_llm.url)
    record = asyncio.run(center.handle_utterance("What is the capital of Portugal?"))
    assert record is not None and record.status is ActionStatus.FAILED
    assert record.message == "the LLM's answer is not JSON with a text: 'Lisbon, of course!'"


@pytest.mark.parametrize(
    ("text", "asked"),
    [
        ("What time does the shop close", True),
        ("Is it raining?", True),
        ("do something unusual", False),
        ("the how-to", False),
    ],
)
def test_what_counts_as_a_question(text: str, asked: bool) -> None:
    assert is_question(text) is asked
