"""One client connection, in every dialect: bytes in, the dialect's sans-I/O wire core, bytes out.

The loop reads one frame at a time, so a request that waits for room in the engine's feed
stops the reading and TCP slows the client down (backpressure). A connection silent for
longer than the idle timeout is evicted, unless it waits for its final text. A dialect
brings its transport and the words of its notices (:class:`Connection`'s abstract methods).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from enum import Enum
from typing import Any, ClassVar, Generic, Protocol, TypeVar

import numpy as np

from voxdesk.engine.session import StreamingEngine
from voxdesk.server.config import ListenerConfig
from voxdesk.server.serving import Channel, EngineJob

__all__ = ["Connection", "ConnectionLog", "Ending", "Samples", "WireCore"]


class ConnectionLog(logging.LoggerAdapter[logging.Logger]):
    """The server's logger for one connection: every line starts ``conn <id>:``."""

    def __init__(self, logger: logging.Logger, connection_id: str) -> None:
        super().__init__(logger, {"connection": connection_id})
        self.connection_id = connection_id

    def process(self, msg: Any, kwargs: MutableMapping[str, Any]) -> tuple[Any, MutableMapping[str, Any]]:
        return f"conn {self.connection_id}: {msg}", kwargs


class Ending(Enum):
    """Why the server ends a connection the client has not left."""

    IDLE = "idle"
    SHUTDOWN = "shutdown"


class WireCore(Protocol):
    """A dialect's sans-I/O server protocol, as far as the connection loop needs it."""

    def events_received(self) -> Sequence[object]:
        """The actions the last input asked for, oldest first; emptied."""


class Samples(Protocol):
    """A wire core's action that carries audio for the open request."""

    @property
    def samples(self) -> np.ndarray:
        """16 kHz mono float32."""


_connection_ids = itertools.count(1)
"""The ids of this process's connections, in the order they opened: unique, unlike random ones
short enough to read in a log."""

P = TypeVar("P", bound=WireCore)
J = TypeVar("J", bound=EngineJob[Any])


class Connection(ABC, Generic[P, J]):
    """One client: its wire core (:attr:`protocol`) and its open request on the engine (:attr:`job`).

    Call :meth:`serve`, then :meth:`release` whatever happened.
    """

    gone: ClassVar[tuple[type[Exception], ...]]
    """The transport's errors that mean the client has left."""

    audio: ClassVar[type[Samples]]
    """The wire core's action carrying audio."""

    end_of_audio: ClassVar[type[object]]
    """The wire core's action ending the open request's audio."""

    protocol: P

    def __init__(self, engine: StreamingEngine, config: ListenerConfig, logger: logging.Logger) -> None:
        self.log = ConnectionLog(logger, str(next(_connection_ids)))
        self.job: J | None = None
        self._engine = engine
        self._config = config
        self._opened = time.monotonic()

    @property
    def seconds_open(self) -> float:
        """How long the connection has been open."""
        return time.monotonic() - self._opened

    async def serve(self) -> None:
        """Run the connection until the client leaves or is evicted for idling."""
        self.log.info("opened from %s", self._peer())
        with contextlib.suppress(*self.gone):
            await self.flush()  # what the wire core says on accepting, in a dialect that greets
            while not self._ended():
                try:
                    # Not wait_for: on 3.11 it can swallow a cancellation (shutdown) that races a frame.
                    async with asyncio.timeout(self._config.idle_timeout) as deadline:
                        await self._receive()
                except TimeoutError:
                    if not deadline.expired():
                        raise  # the transport's own error (a peer's ETIMEDOUT), not idling
                    if self._awaits_final():
                        continue  # the client is waiting for us, not idle
                    await self._evict_idle()
                    return
                await self._carry_out()
                await self._reply()

    async def release(self) -> None:
        """Free the open request's engine session, whatever state it is in."""
        if self.job is not None:
            await self.job.cancel()
        self.log.info("closed after %.1f s", self.seconds_open)

    async def announce_shutdown(self) -> None:
        """Tell a client whose request a shutdown interrupts that the server is going away,
        and end that request's audio so it finishes with what it has."""
        if self.job is None or not self.job.interruptible:
            return
        self.job.end_audio()
        self._notify(Ending.SHUTDOWN)
        with contextlib.suppress(*self.gone):
            await self.flush()

    @abstractmethod
    async def flush(self) -> None:
        """Write everything the wire core queued, in order; raises one of :attr:`gone`."""

    @abstractmethod
    async def close(self, ending: Ending) -> None:
        """Close the transport for ``ending`` (the client was told why)."""

    async def _carry_out(self) -> None:
        for action in self.protocol.events_received():
            if (job := self._open(action)) is not None:
                self.job = job
            elif isinstance(action, self.audio) and self.job is not None:
                await self.job.feed(action.samples)
            elif isinstance(action, self.end_of_audio) and self.job is not None:
                self.job.end_audio()

    def _channel(self, flush: Callable[[], Awaitable[None]]) -> Channel:
        """What a request opened on this connection runs with; its output goes out by ``flush``."""
        return Channel(self._engine, flush, self.gone, self.log, self._config.max_engine_backlog)

    async def _reply(self) -> None:
        """After an input: write what it was answered with."""
        await self.flush()

    def _ended(self) -> bool:
        """Whether the wire core is done with the client (else the transport ends the loop, raising)."""
        return False

    async def _evict_idle(self) -> None:
        self.log.info("nothing received for %g s: closing", self._config.idle_timeout)
        self._notify(Ending.IDLE)
        with contextlib.suppress(*self.gone):
            await self.flush()
            await self.close(Ending.IDLE)

    @abstractmethod
    def _peer(self) -> object:
        """The client's address, for the log."""

    @abstractmethod
    async def _receive(self) -> None:
        """Read the next frame or bytes from the client and hand them to the wire core; a
        failed transport raises one of :attr:`gone`."""

    @abstractmethod
    def _awaits_final(self) -> bool:
        """Whether the client waits for the final text of its request (so silence is not idling)."""

    @abstractmethod
    def _open(self, action: object) -> J | None:
        """The request ``action`` opens on the engine, if it is the wire core's opening action."""

    @abstractmethod
    def _notify(self, ending: Ending) -> None:
        """Queue the dialect's error telling the client the server ends the connection."""
