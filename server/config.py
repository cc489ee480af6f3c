"""The settings of ``voxdesk serve``'s realtime server."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ServerConfig"]


@dataclass(frozen=True)
class ServerConfig:
    """Everything ``voxdesk serve`` can be told. Durations in seconds."""

    served_model_name: str = "voxdesk-builtin"
    host: str = "127.0.0.1"
    port: int = 8000
    api_key: str | None = None
    ssl_certfile: str | None = None
    ssl_keyfile: str | None = None
    allow_insecure_no_api_key: bool = False
    skip_model_validation: bool = False
    idle_timeout: float = 30.0
    max_sessions: int = 64
    max_session_audio: float = 4 * 3600.0
    max_message_audio: float = 600.0
    max_engine_backlog: float = 30.0
    drain_timeout: float = 30.0  # SIGTERM: how long running transcriptions may take to end by themselves
    shutdown_grace: float = 10.0
    max_frame_bytes: int = 16 * 1024 * 1024  # uvicorn's default, which vLLM runs under
    ping_interval: float = 20.0
    ping_timeout: float = 20.0
