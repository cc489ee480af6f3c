"""Which speech engine to build, and how to name it: the one place where the window, the
command line and the file queue turn their choice of engine into one.

Each caller states its choice as :class:`~voxdesk.app.settings.EngineSettings` (the window's
own, the command line's options, the file queue's built-in choice); :func:`build_engine` makes
the engine, :func:`describe_engine` and :func:`model_name` name it for the status line and the
history.
"""

from __future__ import annotations

from collections.abc import Callable

from voxdesk.app.settings import EngineSettings
from voxdesk.engine.errors import EngineUnavailable
from voxdesk.engine.failover import split_urls
from voxdesk.engine.kinds import EngineKind
from voxdesk.engine.remote.openai import OpenAIRealtimeEngine, OpenAISettings
from voxdesk.engine.remote.realtime import VllmRealtimeEngine, VllmRealtimeSettings
from voxdesk.engine.remote.wyoming import WyomingEngine, WyomingSettings
from voxdesk.engine.session import StreamingEngine
from voxdesk.engine.vllm.engine import VllmEngine, VllmSettings
from voxdesk.engine.whisper.builtin import BuiltinEngine, BuiltinSettings
from voxdesk.engine.whisper.decoder import DecoderSettings
from voxdesk.engine.whisper.models import BUNDLED_MODEL

__all__ = [
    "LOCAL_ENGINES",
    "EngineFactory",
    "build_engine",
    "describe_engine",
    "file_engine_choice",
    "is_wyoming",
    "model_name",
]

LOCAL_ENGINES = (EngineKind.BUILTIN, EngineKind.VLLM)
"""The engines that run on this computer, the default first (the remote one needs a server)."""

EngineFactory = Callable[[EngineSettings], StreamingEngine]
"""Builds a new, not yet loaded engine for a choice: :func:`build_engine`, or a test's own."""


def build_engine(
    choice: EngineSettings, *, task: str = "transcribe", vllm: VllmSettings | None = None
) -> StreamingEngine:
    """A new, not yet loaded engine for ``choice``.

    ``task`` is the built-in engine's Whisper task (``translate``: English text from any
    language). ``vllm`` replaces the vLLM engine's settings where the caller has more than
    ``choice.vllm_model`` (the command line's engine arguments).

    Raises:
        EngineUnavailable: a remote choice whose server URLs mix Wyoming and WebSocket servers.
        ValueError: an unknown kind.
    """
    if choice.kind == EngineKind.REMOTE:
        return _server_engine(choice)
    if choice.kind == EngineKind.VLLM:
        return VllmEngine(vllm or VllmSettings(model=choice.vllm_model))
    if choice.kind == EngineKind.BUILTIN:
        decoder = DecoderSettings(
            model=_whisper_model(choice), device=choice.device, language=choice.language, task=task
        )
        return BuiltinEngine(BuiltinSettings(decoder=decoder))
    raise ValueError(f"unknown engine {str(choice.kind)!r}; choose one of: {', '.join(EngineKind)}")


def file_engine_choice(choice: EngineSettings) -> EngineSettings:
    """The engine files are transcribed with: the built-in one with ``choice``'s Whisper model,
    device and language, whatever ``choice`` listens with (why:
    :mod:`voxdesk.app.files.queue_runner`).
    The rest is left out, so that changing the server or vLLM settings keeps a loaded engine."""
    return EngineSettings(
        EngineKind.BUILTIN, whisper_model=choice.whisper_model, device=choice.device, language=choice.language
    )


def describe_engine(choice: EngineSettings) -> str:
    """The engine in a few words, for the window's status line."""
    if choice.kind == EngineKind.REMOTE:
        if is_wyoming(choice.server_url):
            kind = "Wyoming server"
        else:
            kind = "OpenAI Realtime server" if choice.server_dialect == "openai" else "remote server"
        return f"{kind} {choice.server_url}"
    if choice.kind == EngineKind.VLLM:
        return f"local GPU (vLLM, {choice.vllm_model})"
    return f"built-in engine (Whisper {_whisper_model(choice)}, device {choice.device})"


def model_name(choice: EngineSettings) -> str:
    """The model ``choice`` runs, as the history records it (``""``: the server's only one)."""
    if choice.kind == EngineKind.REMOTE:
        return choice.server_model
    if choice.kind == EngineKind.VLLM:
        return choice.vllm_model
    return f"whisper-{_whisper_model(choice)}"


def is_wyoming(urls: str) -> bool:
    """Whether server URLs (one, or several comma-separated) name Wyoming servers (``tcp://``)
    rather than ``/v1/realtime`` ones; a list that mixes both goes by its first URL."""
    return _is_tcp((split_urls(urls) or [""])[0])


def _whisper_model(choice: EngineSettings) -> str:
    return choice.whisper_model or BUNDLED_MODEL


def _is_tcp(url: str) -> bool:
    return url.lower().startswith("tcp://")


def _server_engine(choice: EngineSettings) -> StreamingEngine:
    """A client engine for the servers ``choice.server_url`` lists (comma-separated, failed over
    in that order): Wyoming for ``tcp://`` URLs, else the server dialect's (``openai`` or ``vllm``)."""
    listed = split_urls(choice.server_url)
    wyoming = [url for url in listed if _is_tcp(url)]
    if wyoming and len(wyoming) < len(listed):
        others = ", ".join(url for url in listed if not _is_tcp(url))
        raise EngineUnavailable(
            f"the server URLs mix Wyoming servers ({', '.join(wyoming)}) with WebSocket ones ({others}); "
            "one engine fails over between servers of one kind only"
        )
    urls = ",".join(listed) or choice.server_url
    model, api_key = choice.server_model, choice.api_key or None
    language = None if choice.language == "auto" else choice.language
    if wyoming:
        return WyomingEngine(WyomingSettings(url=urls, model=model, language=language))
    if choice.server_dialect == "openai":
        return OpenAIRealtimeEngine(OpenAISettings(urls, model, api_key, language))
    return VllmRealtimeEngine(VllmRealtimeSettings(url=urls, model=model, api_key=api_key))
