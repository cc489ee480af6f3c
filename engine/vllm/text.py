"""A text model in vLLM's ``AsyncLLM``, in this process: the assistant's LLM beside the speech
model in local GPU mode, without a server.

A request goes as vLLM's own OpenAI server sends it to its engine: the model's chat template
renders the messages (and the tools), a JSON schema becomes structured outputs, tools become
the tool parser's structural tag (a call, when the model makes one, fits its function's
parameters) and the same parser reads the calls back from the text. vllm is imported only in
:meth:`VllmTextModel.load`.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from voxdesk.engine.errors import EngineUnavailable
from voxdesk.engine.vllm.download import resolve_vllm_model, weight_bytes
from voxdesk.engine.vllm.engine import import_vllm, install_hint
from voxdesk.engine.vllm.failures import EngineCoreErrors, explain_start_failure
from voxdesk.engine.vllm.gpu_memory import GPU_SHARING

__all__ = ["Completion", "TextModelSettings", "VllmTextModel"]


@dataclass(frozen=True)
class TextModelSettings:
    """The engine arguments of the text model, as ``vllm serve`` spells them.

    ``tool_parser`` is the ``--tool-call-parser`` that fits the model's chat template (``hermes``
    for Qwen and Hermes models). ``gpu_memory_utilization`` ``None`` asks for what the GPU has
    free, less headroom and the part of a speech model that starts after it
    (:data:`~voxdesk.engine.vllm.gpu_memory.GPU_SHARING`; vLLM's default without a CUDA device).
    ``engine_args`` holds any other ``AsyncEngineArgs`` field by name (``kv_cache_memory_bytes``,
    ``quantization``, ...).
    """

    model: str
    max_model_len: int = 4096
    max_num_seqs: int = 4
    dtype: str = "auto"
    enforce_eager: bool = False
    seed: int = 0
    tool_parser: str = "hermes"
    gpu_memory_utilization: float | None = None
    engine_args: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Completion:
    """One answer: its text, the calls the tool parser read from it (name and arguments as JSON
    text), seconds to the first token and to the last, and the tokens in and out."""

    text: str
    tool_calls: tuple[tuple[str, str], ...]
    first_token_s: float | None
    total_s: float
    tokens_in: int
    tokens_out: int


class VllmTextModel:
    """A chat model served by vLLM in this process; one per model, shared by every use."""

    def __init__(self, settings: TextModelSettings) -> None:
        self.settings = settings
        self._llm: Any = None
        self._api: dict[str, Any] = {}
        self._tokenizer: Any = None
        self._core_errors = EngineCoreErrors()

    @property
    def loaded(self) -> bool:
        """Whether :meth:`load` finished."""
        return self._llm is not None

    async def load(self) -> None:
        """Import vLLM, fetch a hub model not yet cached and start the engine (tens of seconds).

        Raises:
            EngineUnavailable: vllm missing, the model not found, too little memory, an unknown
                tool parser; the message says what to do.
        """
        if self._llm is not None:
            return
        try:
            self._api = await asyncio.to_thread(_import_api)
        except ImportError as exc:
            raise EngineUnavailable(f"{install_hint()} ({exc})") from exc
        try:
            self._api["ToolParserManager"].get_tool_parser(self.settings.tool_parser)
        except KeyError:
            raise EngineUnavailable(
                f"vLLM has no tool parser {self.settings.tool_parser!r}; name the one `vllm serve "
                "--tool-call-parser` takes for this model (hermes for Qwen and Hermes models)"
            ) from None
        path = await asyncio.to_thread(resolve_vllm_model, self.settings.model, "auto")
        share = await asyncio.to_thread(self._memory_share, path)
        self._core_errors.start()
        try:
            self._llm = await asyncio.to_thread(self._start, path, share)
        except Exception as exc:  # vLLM raises many types; all mean "cannot start"
            message = explain_start_failure(self.settings.model, exc, self._core_errors.text)
            self._core_errors.close()
            GPU_SHARING.release(self.settings.model)
            raise EngineUnavailable(message) from exc
        finally:
            self._core_errors.stop()
        self._tokenizer = self._llm.get_tokenizer()

    async def complete(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        tools: Sequence[Mapping[str, Any]] = (),
        schema: Mapping[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> Completion:
        """The model's answer to ``messages``: free text, JSON fitting ``schema``, or (with
        ``tools``) text or calls of them, as the model chooses (``tool_choice`` auto)."""
        if self._llm is None:
            raise RuntimeError("call load() before complete()")
        api, started = self._api, time.perf_counter()
        request = api["ChatCompletionRequest"](model=self.settings.model, messages=list(messages), tools=tools or None)
        parser = api["ToolParserManager"].get_tool_parser(self.settings.tool_parser)(self._tokenizer) if tools else None
        prompt = self._tokenizer.apply_chat_template(
            list(messages), tools=list(tools) or None, add_generation_prompt=True, tokenize=False
        )
        params = api["SamplingParams"](
            temperature=0.0,
            max_tokens=max_tokens or self.settings.max_model_len // 4,
            output_kind=api["RequestOutputKind"].DELTA,
            skip_special_tokens=parser is None,  # the parser reads the call markers
            structured_outputs=self._constraint(request, parser, schema),
        )
        text: list[str] = []
        first: float | None = None
        tokens_in = tokens_out = 0
        async for output in self._llm.generate(prompt, params, request_id=f"voxdesk-llm-{uuid.uuid4().hex}"):
            if output.prompt_token_ids is not None:
                tokens_in = len(output.prompt_token_ids)
            piece = output.outputs[0]
            if first is None and piece.token_ids:
                first = time.perf_counter() - started
            tokens_out += len(piece.token_ids)
            text.append(piece.text)
        answer = "".join(text)
        calls: tuple[tuple[str, str], ...] = ()
        if parser is not None:
            found = parser.extract_tool_calls(answer, request)
            calls = tuple((call.function.name, call.function.arguments) for call in found.tool_calls)
            answer = (found.content or "") if found.tools_called else answer
        return Completion(answer, calls, first, time.perf_counter() - started, tokens_in, tokens_out)

    async def aclose(self) -> None:
        """Shut the engine down and free its memory."""
        if self._llm is not None:
            self._llm.shutdown()
            self._llm = None
        GPU_SHARING.release(self.settings.model)
        self._core_errors.close()

    def _memory_share(self, path: str) -> float | None:
        """The GPU memory share to ask for (:data:`GPU_SHARING`'s), ``None`` without a CUDA device."""
        if self.settings.gpu_memory_utilization is not None:
            return self.settings.gpu_memory_utilization
        model = self.settings.model
        claimed = GPU_SHARING.claim_free(
            model, f"the LLM {model}", lambda: weight_bytes(path, "auto"), "use an LLM server"
        )
        return None if claimed is None else claimed[0]

    def _constraint(self, request: Any, parser: Any, schema: Mapping[str, Any] | None) -> Any:
        """Structured outputs for a schema, or the parser's structural tag for tools (the same
        grammar ``vllm serve --tool-strict-level parameter`` builds)."""
        outputs = self._api["StructuredOutputsParams"]
        if schema is not None:
            return outputs(json=dict(schema))
        if parser is None:
            return None
        tag = parser.get_structural_tag(request, strict_level=self._api["ToolStrictLevel"].PARAMETER)
        return outputs(structural_tag=json.dumps(tag.model_dump())) if tag is not None else None

    def _start(self, path: str, memory_share: float | None) -> Any:
        settings = self.settings
        arguments: dict[str, Any] = {
            **settings.engine_args,
            "model": path,
            "served_model_name": [settings.model],
            "max_model_len": settings.max_model_len,
            "max_num_seqs": settings.max_num_seqs,
            "dtype": settings.dtype,
            "enforce_eager": settings.enforce_eager,
            "seed": settings.seed,
        }
        if memory_share is not None:
            arguments["gpu_memory_utilization"] = memory_share
        return self._api["AsyncLLM"].from_engine_args(self._api["AsyncEngineArgs"](**arguments))


def _import_api() -> dict[str, Any]:
    import_vllm("vllm")  # no vLLM at all: ImportError, the install hint
    protocol = import_vllm("vllm.entrypoints.openai.chat_completion.protocol")
    sampling = import_vllm("vllm.sampling_params")
    return {
        "AsyncLLM": import_vllm("vllm.v1.engine.async_llm").AsyncLLM,
        "AsyncEngineArgs": import_vllm("vllm.engine.arg_utils").AsyncEngineArgs,
        "SamplingParams": sampling.SamplingParams,
        "RequestOutputKind": sampling.RequestOutputKind,
        "StructuredOutputsParams": sampling.StructuredOutputsParams,
        "ChatCompletionRequest": protocol.ChatCompletionRequest,
        "ToolParserManager": import_vllm("vllm.tool_parsers.abstract_tool_parser").ToolParserManager,
        "ToolStrictLevel": import_vllm("vllm.tool_parsers.tool_strict_level").ToolStrictLevel,
    }
