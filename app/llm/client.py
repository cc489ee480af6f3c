"""How Voxdesk asks a language model (:class:`Llm`), and the first runtime: any OpenAI-compatible
chat server (vLLM's ``vllm serve``, Ollama, llama.cpp's server, LM Studio, OpenAI) through the
official ``openai`` SDK. The other, vLLM in this process, is :mod:`voxdesk.app.llm.in_process`.

Every request streams and has a time budget for the whole answer; whatever goes wrong (no
server, a refusal, an HTTP error, an answer too late) is one :class:`LlmError` with a line
that names the server, so a caller can fall back and say why.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast

import openai

from voxdesk.engine.errors import VoxdeskError

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolUnionParam

__all__ = ["Llm", "LlmError", "LlmReply", "OpenAiCompatibleLlm", "ToolCall"]

_AUTO: Literal["auto"] = "auto"


class LlmError(VoxdeskError):
    """The model could not be asked, or did not answer in time; the message is one line."""


@dataclass(frozen=True)
class ToolCall:
    """A function the model called, with its arguments as the JSON text it wrote."""

    name: str
    arguments: str

    def parsed_arguments(self) -> dict[str, Any] | None:
        """The arguments as a JSON object, or None when they are not one."""
        try:
            value = json.loads(self.arguments or "{}")
        except json.JSONDecodeError:
            return None
        return value if isinstance(value, dict) else None


@dataclass(frozen=True)
class LlmReply:
    """What the model answered and what it cost: seconds to the first token and to the last."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    first_token_s: float | None = None
    total_s: float = 0.0
    tokens_in: int | None = None
    tokens_out: int | None = None


class Llm(Protocol):
    """A chat model, whichever runtime serves it."""

    @property
    def where(self) -> str:
        """Where the model runs, for messages: "the LLM at URL", "the LLM MODEL in this process"."""
        ...

    async def chat(
        self,
        messages: Sequence[dict[str, str]],
        budget_s: float,
        *,
        tools: Sequence[dict[str, Any]] = (),
        schema: dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> LlmReply:
        """The model's answer to ``messages`` within ``budget_s`` seconds in all; ``tools`` lets it
        call one of them (``tool_choice`` auto), ``schema`` asks for JSON that fits it. Raises
        :class:`LlmError`."""
        ...

    async def models(self, budget_s: float) -> list[str]:
        """The models offered: the connection test. Raises :class:`LlmError`."""
        ...

    async def prepare(self) -> None:
        """Have the model ready for the first request (loads it, for a runtime that must). Raises
        :class:`LlmError`."""
        ...

    async def aclose(self) -> None:
        """Let go of the connection or the model."""
        ...


class OpenAiCompatibleLlm:
    """A chat model behind ``url`` (the API's base, e.g. ``http://127.0.0.1:8000/v1``)."""

    def __init__(self, url: str, model: str = "", api_key: str = "") -> None:
        """``model`` empty asks the server for its only model."""
        self.url = url.rstrip("/")
        self.model = model
        # The SDK insists on a key; servers without authentication ignore it.
        self._client = openai.AsyncOpenAI(base_url=self.url, api_key=api_key or "none", max_retries=0)

    @property
    def where(self) -> str:
        return f"the LLM at {self.url}"

    async def chat(
        self,
        messages: Sequence[dict[str, str]],
        budget_s: float,
        *,
        tools: Sequence[dict[str, Any]] = (),
        schema: dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> LlmReply:
        """See :meth:`Llm.chat`; the answer streams from the server."""
        async with self._asking(budget_s):
            return await self._stream(messages, tools, schema, max_tokens)

    async def models(self, budget_s: float) -> list[str]:
        """The models the server offers. Raises :class:`LlmError`."""
        async with self._asking(budget_s):
            return [model.id async for model in self._client.models.list()]

    async def prepare(self) -> None:
        """Nothing to do: the server has its model loaded."""

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self._client.close()

    @contextlib.asynccontextmanager
    async def _asking(self, budget_s: float) -> AsyncIterator[None]:
        """Within ``budget_s``; each way a request fails becomes one :class:`LlmError` line."""
        try:
            async with asyncio.timeout(budget_s):
                yield
        except TimeoutError:
            raise LlmError(f"the LLM at {self.url} did not answer within {budget_s:g} s") from None
        except openai.APIStatusError as error:
            raise LlmError(f"the LLM at {self.url} answered HTTP {error.status_code}: {_first_line(error)}") from None
        except openai.APIConnectionError as error:
            raise LlmError(f"could not reach the LLM at {self.url}: {_first_line(error.__cause__ or error)}") from None
        except openai.OpenAIError as error:
            raise LlmError(f"the LLM at {self.url} failed: {_first_line(error)}") from None

    async def _model(self) -> str:
        if not self.model:
            offered = [model.id async for model in self._client.models.list()]
            if len(offered) != 1:
                raise LlmError(f"the LLM at {self.url} offers {len(offered)} models; name one: {', '.join(offered)}")
            self.model = offered[0]
        return self.model

    async def _stream(
        self,
        messages: Sequence[dict[str, str]],
        tools: Sequence[dict[str, Any]],
        schema: dict[str, Any] | None,
        max_tokens: int | None,
    ) -> LlmReply:
        response_format: Any = openai.omit
        if schema is not None:
            response_format = {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema}}
        started = time.perf_counter()
        stream = await self._client.chat.completions.create(
            model=await self._model(),
            messages=cast("list[ChatCompletionMessageParam]", list(messages)),
            stream=True,
            stream_options={"include_usage": True},
            temperature=0,
            tools=cast("list[ChatCompletionToolUnionParam]", list(tools)) if tools else openai.omit,
            tool_choice=_AUTO if tools else openai.omit,
            response_format=response_format,
            max_tokens=max_tokens if max_tokens is not None else openai.omit,
        )
        text: list[str] = []
        calls: dict[int, list[str]] = {}  # index -> [name, arguments so far]
        first: float | None = None
        usage = None
        async for chunk in stream:
            usage = chunk.usage or usage
            for choice in chunk.choices:
                delta = choice.delta
                if first is None and (delta.content or delta.tool_calls):
                    first = time.perf_counter() - started
                text.append(delta.content or "")
                for call in delta.tool_calls or ():
                    name, arguments = calls.setdefault(call.index, ["", ""])
                    function = call.function
                    if function is not None:
                        calls[call.index] = [name + (function.name or ""), arguments + (function.arguments or "")]
        return LlmReply(
            "".join(text),
            tuple(ToolCall(name, arguments) for name, arguments in calls.values()),
            first,
            time.perf_counter() - started,
            usage.prompt_tokens if usage else None,
            usage.completion_tokens if usage else None,
        )


def _first_line(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0]
