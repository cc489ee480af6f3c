"""The engine a user chose in settings, built and described."""

from __future__ import annotations

from voxdesk.app.settings import EngineSettings
from voxdesk.engine import StreamingEngine, create_engine
from voxdesk.engine.realtime.client import RemoteEngine, RemoteSettings

__all__ = ["build_engine", "describe_engine"]


def build_engine(choice: EngineSettings) -> StreamingEngine:
    """A new, not yet loaded engine for ``choice``."""
    if choice.kind == "remote":
        remote = RemoteSettings(url=choice.server_url, model=choice.server_model, api_key=choice.api_key or None)
        return RemoteEngine(remote)
    if choice.kind == "vllm":
        return create_engine("vllm", model=choice.vllm_model)
    return create_engine("builtin")


def describe_engine(choice: EngineSettings) -> str:
    """The engine in a few words, for the window's status line."""
    if choice.kind == "remote":
        return f"remote server {choice.server_url}"
    if choice.kind == "vllm":
        return f"local GPU (vLLM, {choice.vllm_model})"
    return "built-in CPU engine"
