"""The second runtime of :class:`~voxdesk.app.llm.client.Llm`: a text model in vLLM in this process
(:class:`~voxdesk.engine.vllm.text.VllmTextModel`), beside the speech model in local GPU mode.

The model loads on :meth:`InProcessLlm.prepare` or the first request, in the background: a
request that comes while it loads waits within its own budget, and a late one is an
:class:`LlmError` like a slow server's, so the text is written as heard. A model that could not
start is not tried again by every request: the same line comes back until the settings change.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from typing import Any

from voxdesk.app.llm.client import LlmError, LlmReply, ToolCall
from voxdesk.engine.errors import EngineUnavailable, one_line
from voxdesk.engine.vllm.text import TextModelSettings, VllmTextModel

__all__ = ["InProcessLlm"]


class InProcessLlm:
    """The text model ``settings`` names, served by vLLM in this process."""

    def __init__(self, settings: TextModelSettings) -> None:
        self.settings = settings
        self._model = VllmTextModel(settings)
        self._loading: asyncio.Future[None] | None = None  # kept when it fails: the same line, no new load

    @property
    def where(self) -> str:
        return f"the LLM {self.settings.model} in this process"

    async def prepare(self) -> None:
        """Load the model (once; later calls wait for the same load). Raises :class:`LlmError`."""
        if self._loading is None:
            self._loading = asyncio.ensure_future(self._model.load())
        try:
            await asyncio.shield(self._loading)  # a caller's budget ends its wait, not the load
        except EngineUnavailable as error:
            raise LlmError(f"{self.where} could not start: {error}") from None

    async def chat(
        self,
        messages: Sequence[dict[str, str]],
        budget_s: float,
        *,
        tools: Sequence[dict[str, Any]] = (),
        schema: dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> LlmReply:
        """See :meth:`~voxdesk.app.llm.client.Llm.chat`; a request cut by the budget is aborted in vLLM."""
        try:
            async with asyncio.timeout(budget_s):
                await self.prepare()
                done = await self._model.complete(messages, tools=tools, schema=schema, max_tokens=max_tokens)
        except TimeoutError:
            loading = "" if self._model.loaded else " (it is still loading)"
            raise LlmError(f"{self.where} did not answer within {budget_s:g} s{loading}") from None
        except LlmError:
            raise
        except Exception as error:  # vLLM raises many types (a prompt too long, a dead engine core)
            raise LlmError(f"{self.where} failed: {one_line(error)}") from None
        calls = tuple(ToolCall(name, arguments) for name, arguments in done.tool_calls)
        return LlmReply(done.text, calls, done.first_token_s, done.total_s, done.tokens_in, done.tokens_out)

    async def models(self, budget_s: float) -> list[str]:
        """The one model, once it loaded within ``budget_s``. Raises :class:`LlmError`."""
        try:
            async with asyncio.timeout(budget_s):
                await self.prepare()
        except TimeoutError:
            raise LlmError(f"{self.where} did not load within {budget_s:g} s (it goes on loading)") from None
        return [self.settings.model]

    async def aclose(self) -> None:
        """Free the model's memory (after a load under way ends: its thread cannot be stopped)."""
        if self._loading is not None:
            with contextlib.suppress(EngineUnavailable):
                await self._loading
        await self._model.aclose()
