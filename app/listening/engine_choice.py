"""The engine a user chose in settings, built and described."""

from __future__ import annotations

from voxdesk.app.settings import EngineSettings
from voxdesk.engine import EngineKind, StreamingEngine, create_engine
from voxdesk.engine.realtime.client import RemoteEngine, RemoteSettings
from voxdesk.engine.realtime.openai_client import OpenAIRealtimeEngine, OpenAISettings
from voxdesk.engine.wyoming.client import WyomingEngine, WyomingSettings

__all__ = ["build_engine", "describe_engine", "is_wyoming"]


def is_wyoming(url: str) -> bool:
    """Whether a server URL names a Wyoming server (``tcp://``) rather than a ``/v1/realtime`` one."""
    return url.strip().lower().startswith("tcp://")


def build_engine(choice: EngineSettings) -> StreamingEngine:
    """A new, not yet loaded engine for ``choice``."""
    language = None if choice.language == "auto" else choice.language
    if choice.kind == EngineKind.REMOTE and is_wyoming(choice.server_url):
        return WyomingEngine(WyomingSettings(url=choice.server_url, model=choice.server_model, language=language))
    if choice.kind == EngineKind.REMOTE and choice.server_dialect == "openai":
        settings = OpenAISettings(choice.server_url, choice.server_model, choice.api_key or None, language)
        return OpenAIRealtimeEngine(settings)
    if choice.kind == EngineKind.REMOTE:
        remote = RemoteSettings(url=choice.server_url, model=choice.server_model, api_key=choice.api_key or None)
        return RemoteEngine(remote)
    if choice.kind == EngineKind.VLLM:
        return create_engine(EngineKind.VLLM, model=choice.vllm_model)
    model = choice.whisper_model or "tiny.en"
    return create_engine(EngineKind.BUILTIN, model=model, device=choice.device, language=choice.language)


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
    return f"built-in engine (Whisper {choice.whisper_model or 'tiny.en'}, device {choice.device})"
