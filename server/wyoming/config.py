"""The settings of ``voxdesk serve --wyoming``."""

from __future__ import annotations

from dataclasses import dataclass

from voxdesk.engine.wire.wyoming.address import DEFAULT_PORT
from voxdesk.server.config import ListenerConfig

__all__ = ["WyomingConfig"]


@dataclass(frozen=True)
class WyomingConfig(ListenerConfig):
    """Where the Wyoming server listens and its limits (those of ``voxdesk serve``). Seconds."""

    port: int = DEFAULT_PORT
    allow_insecure: bool = False  # listen beyond loopback although Wyoming has no authentication
