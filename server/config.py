"""The settings of ``voxdesk serve``: what every dialect's server shares, and the realtime server's."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ListenerConfig", "ServerConfig"]


@dataclass(frozen=True)
class ListenerConfig:
    """Where a server listens and the limits every dialect keeps. Durations in seconds."""

    host: str = "127.0.0.1"
    port: int = 0  # any free port; each dialect has its own default
    idle_timeout: float = 30.0
    max_sessions: int = 64
    max_session_audio: float = 4 * 3600.0
    max_engine_backlog: float = 30.0
    shutdown_grace: float = 10.0


@dataclass(frozen=True)
class ServerConfig(ListenerConfig):
    """Everything ``voxdesk serve`` can be told for ``/v1/realtime``. Durations in seconds."""

    port: int = 8000  # vLLM's
    served_model_name: str = "voxdesk-builtin"
    api_key: str | None = None
    ssl_certfile: str | None = None
    ssl_keyfile: str | None = None
    allow_insecure_no_api_key: bool = False
    skip_model_validation: bool = False
    max_message_audio: float = 600.0
    max_pending_audio: float = 60.0  # audio a session may hold while no generation takes it
    drain_timeout: float = 30.0  # SIGTERM: how long running transcriptions may take to end by themselves
    max_frame_bytes: int = 16 * 1024 * 1024  # uvicorn's default, which vLLM runs under
    ping_interval: float = 20.0
    ping_timeout: float = 20.0
