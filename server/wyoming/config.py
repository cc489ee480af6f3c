"""The settings of ``voxdesk serve --wyoming``."""

from __future__ import annotations

from dataclasses import dataclass

from voxdesk.engine.wire.wyoming.address import DEFAULT_PORT

__all__ = ["WyomingConfig"]


@dataclass(frozen=True)
class WyomingConfig:
    """Where the Wyoming server listens and its limits (those of ``voxdesk serve``). Seconds."""

    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    allow_insecure: bool = False  # listen beyond loopback although Wyoming has no authentication
    idle_timeout: float = 30.0
    max_sessions: int = 64
    max_session_audio: float = 4 * 3600.0
    max_engine_backlog: float = 30.0
    shutdown_grace: float = 10.0
