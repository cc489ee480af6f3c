"""The listening side every dialect's server shares: the loopback rule, the port, the session
count, and a shutdown that lets open requests finish within a grace period."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import socket
from abc import ABC, abstractmethod
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from voxdesk.engine.errors import VoxdeskError
from voxdesk.engine.session import StreamingEngine
from voxdesk.server.config import ListenerConfig
from voxdesk.server.connection import Connection, Ending
from voxdesk.server.health import engine_stopped, until_engine_stops

__all__ = ["InsecureBindError", "Listener", "is_loopback", "refuse_insecure_bind"]


class InsecureBindError(VoxdeskError, RuntimeError):
    """Refusal to listen beyond loopback without an API key."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback name or address."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def refuse_insecure_bind(host: str, allowed: bool, refusal: str) -> None:
    """Raise ``InsecureBindError(refusal)`` for a host beyond loopback, unless ``allowed``."""
    if not allowed and not is_loopback(host):
        raise InsecureBindError(refusal)


class Bound(Protocol):
    """An asyncio or ``websockets`` server, as far as :class:`Listener` needs it."""

    @property
    def sockets(self) -> tuple[socket.socket, ...]:
        """The listening sockets."""

    async def wait_closed(self) -> None:
        """Return once the server is closed."""


S = TypeVar("S", bound=Bound)
C = TypeVar("C", bound=Connection[Any, Any])


class Listener(ABC, Generic[S, C]):
    """A server of one dialect over one engine: its listening socket and its connections.

    A dialect binds (:meth:`_listen`), stops accepting (:meth:`_stop_accepting`) and hands
    each connection it accepts to :meth:`_serve`.
    """

    SHUTTING_DOWN: ClassVar[str] = "shutting down"
    """Why no session opens once :meth:`shutdown` began."""

    FULL: ClassVar[str] = "all {} sessions are in use"
    """Why no session opens while ``max_sessions`` are open."""

    def __init__(self, engine: StreamingEngine, config: ListenerConfig) -> None:
        self.engine = engine
        self.config = config
        self._server: S | None = None
        self._connections: set[C] = set()
        self._no_connections = asyncio.Event()
        self._no_connections.set()
        self._closing = False

    @property
    def port(self) -> int:
        """The port actually bound (useful with port 0)."""
        assert self._server is not None, "call start() first"
        return int(self._server.sockets[0].getsockname()[1])

    @property
    def active_connections(self) -> int:
        """Connections currently open."""
        return len(self._connections)

    async def start(self) -> None:
        """Bind and start accepting connections."""
        self._server = await self._listen()

    async def shutdown(self) -> None:
        """Stop accepting, let open requests finish within the grace period (their clients are
        told the server is going away), then close every connection."""
        self._closing = True
        if self._server is not None:
            self._stop_accepting(self._server)
        for connection in list(self._connections):
            await connection.announce_shutdown()
        requests = [c.job.task for c in self._connections if c.job is not None]
        if requests:
            await asyncio.wait(requests, timeout=self.config.shutdown_grace)
        for connection in list(self._connections):
            await connection.close(Ending.SHUTDOWN)
        if self._server is not None:
            await self._server.wait_closed()

    async def until_engine_stops(self) -> str:
        """Return once the engine has stopped for good: why, in one sentence (never, for an
        engine that cannot stop). The clients of its failed sessions have been told."""
        return await until_engine_stops(self.engine)

    async def until_clients_leave(self) -> None:
        """Return once no connection is open, or after the shutdown grace period."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self.config.shutdown_grace):
                await self._no_connections.wait()

    async def _serve(self, connection: C) -> None:
        """Run ``connection`` to its end, counted among the open ones meanwhile."""
        self._connections.add(connection)
        self._no_connections.clear()
        try:
            await connection.serve()
        finally:
            self._connections.discard(connection)  # first: a closing connection frees its slot at once
            if not self._connections:
                self._no_connections.set()
            await connection.release()

    def _busy(self) -> str | None:
        """Why no new session can open now, if so."""
        if self._closing:
            return self.SHUTTING_DOWN
        if unready := self._unready():
            return unready
        if len(self._connections) >= self.config.max_sessions:
            return self.FULL.format(self.config.max_sessions)
        return None

    def _unready(self) -> str | None:
        """Why the server takes no sessions at all now (it loads, it drains, its engine
        stopped), if so."""
        if why := engine_stopped(self.engine):
            return f"the engine stopped: {why}"
        return None

    @abstractmethod
    async def _listen(self) -> S:
        """Bind the listening socket, accepting connections."""

    @abstractmethod
    def _stop_accepting(self, server: S) -> None:
        """Close the listening socket; the open connections stay."""
