"""How the client engines reach a server: WebSocket (the vLLM dialect, OpenAI Realtime) or
Wyoming's framed events over TCP, each a :class:`~voxdesk.engine.remote.session.Transport`.

A transport's :meth:`connect` tells a refused API key (:class:`KeyRefused`), which no other
server or retry answers differently, from a lost server (:class:`ServerLost`: refused for
another reason, unreachable, or dropped while in use), which the failover replaces with the
next one, and from a silent one (``TimeoutError``: it took the connection and did not answer
the handshake, or a time limit of the caller's ran out inside the ``async with``).
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections import deque
from collections.abc import AsyncIterator

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus, InvalidURI

from voxdesk.engine.errors import EngineUnavailable, VoxdeskError
from voxdesk.engine.failover import ServerLost
from voxdesk.engine.wire.wyoming.address import parse_tcp_uri
from voxdesk.engine.wire.wyoming.events import WyomingProtocolError
from voxdesk.engine.wire.wyoming.framing import Event, EventReader, FramingError, encode_event

__all__ = ["REFUSED_KEY", "KeyRefused", "TcpTransport", "UnreadableFrame", "WebSocketTransport", "ssl_context"]

REFUSED_KEY = {401, 403}  # HTTP statuses no other server or retry answers differently


class KeyRefused(EngineUnavailable):
    """The server refused the API key (HTTP 401 or 403); the message says which server."""


class UnreadableFrame(VoxdeskError):
    """The server sent a frame the client cannot read (not its dialect's events, JSON nested
    past the parser, text that is not Unicode): it is broken. The message says what was wrong."""


def ssl_context(url: str, ca_file: str | None) -> ssl.SSLContext | None:
    """The TLS context for a ``wss://`` URL, trusting ``ca_file`` too; ``None`` for ``ws://``."""
    if not url.startswith("wss://"):
        return None
    return ssl.create_default_context(cafile=ca_file)


def _lost(unreachable: str, failure: BaseException) -> ServerLost:
    """A :class:`ServerLost` for ``failure``, its message after ``unreachable``."""
    if isinstance(failure, ConnectionClosed):
        reason = f"closed with code {failure.rcvd.code if failure.rcvd else 1006}"
    else:
        reason = str(failure) or type(failure).__name__
    return ServerLost(f"{unreachable}: {reason}" if unreachable else reason)


class _WebSocketLink:
    """Text frames over one WebSocket connection."""

    def __init__(self, socket: ClientConnection) -> None:
        self._socket = socket

    async def send(self, frame: str) -> None:
        await self._socket.send(frame)

    async def receive(self) -> str:
        """The next frame (a binary one decoded as UTF-8).

        Raises:
            ConnectionClosed: the connection ended.
            UnreadableFrame: a binary frame that is not UTF-8.
        """
        frame = await self._socket.recv()
        if isinstance(frame, str):
            return frame
        try:
            return frame.decode()
        except UnicodeDecodeError as bad:
            raise UnreadableFrame(f"a binary frame that is not UTF-8 ({bad.reason} at byte {bad.start})") from None


class WebSocketTransport:
    """WebSocket connections with a bearer API key, TLS for ``wss://`` (``ca_file`` trusted too).

    Args:
        kind: what the servers are, for messages ("speech server").
        max_size: the largest frame taken (``None``: any).
        compression: ``"deflate"`` offers per-message deflate; ``None`` offers none.
    """

    def __init__(
        self,
        kind: str,
        api_key: str | None,
        open_timeout: float,
        ca_file: str | None,
        max_size: int | None,
        compression: str | None = "deflate",
    ) -> None:
        self.kind = kind
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.open_timeout = open_timeout
        self.ca_file = ca_file
        self._max_size = max_size
        self._compression = compression

    @contextlib.asynccontextmanager
    async def connect(self, url: str, unreachable: str = "") -> AsyncIterator[_WebSocketLink]:
        """A connection to ``url`` for the length of an ``async with``.

        Raises:
            KeyRefused: the server refused the API key.
            ServerLost: any other refusal, an unreachable server, or a dropped connection (the
                message after ``unreachable``, when given).
            TimeoutError: no answer to the handshake within the open timeout, or a time limit
                of the caller's inside the ``async with``.
        """
        opening = connect(
            url,
            additional_headers=self.headers,
            open_timeout=self.open_timeout,
            max_size=self._max_size,
            compression=self._compression,
            ssl=ssl_context(url, self.ca_file),
        )
        opened = False
        try:
            async with opening as socket:
                opened = True
                yield _WebSocketLink(socket)
        except InvalidStatus as refused:
            status = refused.response.status_code
            if status in REFUSED_KEY:
                raise KeyRefused(f"the {self.kind} at {url} refused the API key (HTTP {status})") from refused
            raise ServerLost(f"the {self.kind} at {url} refused the connection (HTTP {status})") from refused
        except TimeoutError as late:  # before OSError, its base
            if opened:
                raise
            raise TimeoutError(f"it did not answer the WebSocket handshake within {self.open_timeout:g} s") from late
        except (ConnectionClosed, OSError, InvalidHandshake, InvalidURI) as lost:
            raise _lost(unreachable, lost) from lost


class _TcpLink:
    """Wyoming events over one TCP connection, read and written with the sans-I/O framing."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._framing = EventReader()
        self._events: deque[Event] = deque()

    async def send(self, frame: Event) -> None:
        self._writer.write(encode_event(frame))
        await self._writer.drain()

    async def receive(self) -> Event | None:
        """The next event; ``None`` at the end of the stream.

        Raises:
            FramingError: the stream ended inside an event.
            UnreadableFrame: bytes that are not Wyoming events (JSON nested past the parser included).
        """
        while not self._events:
            data = await self._reader.read(64 * 1024)
            if not data:
                self._framing.check_eof()
                return None
            self._framing.receive_data(data)
            try:
                self._events.extend(self._framing.events())
            except FramingError as bad:
                raise UnreadableFrame(str(bad)) from None
        return self._events.popleft()

    async def close(self) -> None:
        self._writer.close()
        with contextlib.suppress(ConnectionError):
            await self._writer.wait_closed()


class TcpTransport:
    """Wyoming connections to ``tcp://HOST:PORT``, each opened within ``connect_timeout``."""

    def __init__(self, connect_timeout: float) -> None:
        self.connect_timeout = connect_timeout

    @contextlib.asynccontextmanager
    async def connect(self, url: str, unreachable: str = "") -> AsyncIterator[_TcpLink]:
        """A connection to ``url`` for the length of an ``async with``.

        Raises:
            ServerLost: the server cannot be reached (within the connect timeout), or the
                connection failed (broke, or carried bytes or events that are not Wyoming's);
                the message after ``unreachable``, when given.
            TimeoutError: a time limit of the caller's inside the ``async with``.
        """
        host, port = parse_tcp_uri(url)
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), self.connect_timeout)
        except (OSError, TimeoutError) as exc:
            raise _lost(unreachable or "cannot reach it", exc) from exc
        link = _TcpLink(reader, writer)
        try:
            yield link
        except TimeoutError:  # before OSError, its base: the caller's limit, the server silent
            raise
        except (OSError, FramingError, WyomingProtocolError) as exc:
            raise _lost(unreachable or "connection failed", exc) from exc
        finally:
            await link.close()
