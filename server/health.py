"""Whether the engine a server runs on can still transcribe.

The built-in engine cannot stop while loaded: a decode that raises fails its own session and
the engine takes the next one. An engine whose runtime can die under it, vLLM's (its engine
core is a process of its own), says so in ``stopped``; then every session fails, ``/health``
is 503, and ``voxdesk serve`` exits 1 once its clients have heard, so that an orchestrator
starts a fresh process (:class:`EngineStopped`), as ``vllm serve`` does.
"""

from __future__ import annotations

import asyncio
from typing import Protocol, runtime_checkable

from voxdesk.engine.errors import VoxdeskError
from voxdesk.engine.session import StreamingEngine

__all__ = ["EngineStopped", "Stoppable", "engine_stopped", "until_engine_stops"]

WATCH_INTERVAL = 0.5
"""Seconds between looks at the engine (vLLM notices a dead core within about a second itself)."""


class EngineStopped(VoxdeskError):
    """The engine ``voxdesk serve`` runs on stopped for good: the server exits 1 to be restarted."""


@runtime_checkable
class Stoppable(Protocol):
    """An engine that can stop for good while loaded."""

    @property
    def stopped(self) -> str | None:
        """Why it stopped, in one sentence; ``None`` while it runs."""


def engine_stopped(engine: StreamingEngine) -> str | None:
    """Why ``engine`` stopped for good, or ``None`` (always, for an engine that cannot stop)."""
    return engine.stopped if isinstance(engine, Stoppable) else None


async def until_engine_stops(engine: StreamingEngine) -> str:
    """Return once ``engine`` has stopped for good: why (never, for an engine that cannot stop)."""
    if not isinstance(engine, Stoppable):
        await asyncio.Event().wait()
    while (why := engine_stopped(engine)) is None:
        await asyncio.sleep(WATCH_INTERVAL)
    return why
