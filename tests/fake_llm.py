"""A fake OpenAI-compatible chat server on loopback, for what a real model would not do.

vLLM serving the tiny model (tests/llm_support.py) is the real server; this fake answers
whatever a test scripts: tool calls a constrained decoder would never write, answers that are
not JSON, answers too late. It streams server-sent events and records the requests it got.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.loopback_http import FakeHandler, LoopbackServer

__all__ = ["FakeLlm", "fake_llm"]


class FakeLlm(LoopbackServer):
    """A fake OpenAI-compatible LLM server: streams ``self.tool_calls``, else ``self.content``,
    after ``self.delay``, as server-sent events, as OpenAI's API does for ``stream: true``."""

    def __init__(self) -> None:
        self.tool_calls: list[dict[str, Any]] = []  # functions: {"name": ..., "arguments": "<json>"}
        self.content = "I can't help with that."
        self.model = "fake-model"
        self.delay = 0.0
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        fake = self

        class Handler(FakeHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append({"path": self.path, **body})
                fake.headers.append({name.lower(): value for name, value in self.headers.items()})
                time.sleep(fake.delay)
                delta: dict[str, Any] = {"role": "assistant"}
                if fake.tool_calls:
                    delta["tool_calls"] = [
                        {"index": index, "id": f"call_{index}", "type": "function", "function": function}
                        for index, function in enumerate(fake.tool_calls)
                    ]
                else:
                    delta["content"] = fake.content
                chunks = [
                    {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": body["model"], "choices": [
                        {"index": 0, "delta": delta, "finish_reason": None}
                    ]},
                    {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": body["model"], "choices": [],
                     "usage": {"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12}},
                ]  # fmt: skip
                payload = "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks) + "data: [DONE]\n\n"
                with contextlib.suppress(OSError):  # the client gave up (timeout test)
                    self.reply(200, "text/event-stream", payload.encode())

            def do_GET(self) -> None:  # /v1/models: the one model it pretends to serve
                payload = json.dumps(
                    {"object": "list", "data": [{"id": fake.model, "object": "model", "created": 0, "owned_by": "me"}]}
                ).encode()
                self.reply(200, "application/json", payload)

        super().__init__(Handler)


@pytest.fixture
def fake_llm() -> Iterator[FakeLlm]:
    server = FakeLlm()
    yield server
    server.close()
