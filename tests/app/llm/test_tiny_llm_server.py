"""vLLM's OpenAI-compatible server on the tiny steered chat model (scripts/make_tiny_chat_model.py),
through the official SDK: the model's fixed greedy answers prove real generation under each
kind of request (plain, streamed, a JSON schema, tools).

The text means nothing; what the steered circuit makes greedy output do is fixed: ``Hello`` for
plain chat, ``ok`` in an open string, a ``<tool_call>`` first when the prompt has tools. Which
tool ``auto`` picks is fixed but arbitrary, so only its shape is checked."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from openai import OpenAI
from openai.types.chat import ChatCompletionFunctionToolParam, ChatCompletionMessageParam
from openai.types.shared_params import ResponseFormatJSONSchema

from tests.llm_support import CHAT_MODEL_NAME
from tests.vllm_support import requires_vllm

pytestmark = [pytest.mark.vllm, requires_vllm]

MESSAGES: list[ChatCompletionMessageParam] = [{"role": "user", "content": "turn it up a little"}]
TEXT_FORMAT: ResponseFormatJSONSchema = {
    "type": "json_schema",
    "json_schema": {
        "name": "answer",
        "schema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    },
}
ARGUMENTS: dict[str, tuple[str, str, type | tuple[type, ...]]] = {
    "set_volume": ("level", "number", (int, float)),
    "search": ("query", "string", str),
}
"""Two tools, each with one required argument: the tool's name, that argument's name, JSON type and Python type."""


def tool(name: str) -> ChatCompletionFunctionToolParam:
    argument, kind, _ = ARGUMENTS[name]
    parameters = {
        "type": "object",
        "properties": {argument: {"type": kind}},
        "required": [argument],
        "additionalProperties": False,
    }
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


@pytest.fixture
def client(llm_server: str) -> Iterator[OpenAI]:
    with OpenAI(base_url=llm_server, api_key="unused", timeout=60, max_retries=0) as opened:
        yield opened


def test_plain_chat_answers_hello_and_stops(client: OpenAI) -> None:
    reply = client.chat.completions.create(model=CHAT_MODEL_NAME, messages=MESSAGES, max_tokens=32, temperature=0)
    choice = reply.choices[0]
    assert (choice.message.content, choice.finish_reason) == ("Hello", "stop")
    assert reply.usage is not None and reply.usage.completion_tokens == 2  # Hello, then the end token


def test_a_streamed_answer_comes_in_several_chunks(client: OpenAI) -> None:
    stream = client.chat.completions.create(
        model=CHAT_MODEL_NAME, messages=MESSAGES, max_tokens=32, temperature=0, stream=True
    )
    chunks = [chunk for chunk in stream if chunk.choices]
    assert len(chunks) > 1
    assert "".join(chunk.choices[0].delta.content or "" for chunk in chunks) == "Hello"
    assert chunks[-1].choices[0].finish_reason == "stop"


def test_a_json_schema_answer_parses_with_ok_in_its_string(client: OpenAI) -> None:
    reply = client.chat.completions.create(
        model=CHAT_MODEL_NAME,
        messages=MESSAGES,
        max_tokens=64,
        temperature=0,
        response_format=TEXT_FORMAT,
    )
    choice = reply.choices[0]
    assert choice.finish_reason == "stop", choice.message.content
    assert json.loads(choice.message.content or "") == {"text": "ok"}


def test_tools_with_auto_give_one_call_whose_arguments_are_json(client: OpenAI) -> None:
    reply = client.chat.completions.create(
        model=CHAT_MODEL_NAME,
        messages=MESSAGES,
        max_tokens=64,
        temperature=0,
        tools=[tool(name) for name in ARGUMENTS],
        tool_choice="auto",
    )
    choice = reply.choices[0]
    calls = choice.message.tool_calls or []
    assert len(calls) == 1, choice.message.content
    call = calls[0]
    assert call.type == "function" and call.function.name in ARGUMENTS
    argument, _, python_type = ARGUMENTS[call.function.name]
    arguments = json.loads(call.function.arguments)
    assert isinstance(arguments, dict) and list(arguments) == [argument], arguments
    assert isinstance(arguments[argument], python_type), arguments
    assert choice.finish_reason == "tool_calls" and choice.message.content is None
