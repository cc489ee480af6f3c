"""The engine a user chose in settings, built and described."""

from __future__ import annotations

from voxdesk.app.settings import EngineSettings
from voxdesk.engine import EngineKind, StreamingEngine, create_engine
from voxdesk.engine.realtime.client import RemoteEngine, RemoteSettings

__all__ = ["build_engine", "describe_engine"]


def build_engine(choice: EngineSettings) -> StreamingEngine:
    """A new, not yet loaded engine for ``choice``."""
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
        return f"remote server {choice.server_url}"
    if choice.kind == EngineKind.VLLM:
        return f"local GPU (vLLM, {choice.vllm_model})"
    return f"built-in engine (Whisper {choice.whisper_model or 'tiny.en'}, device {choice.device})"
