"""``voxdesk serve --wyoming``: Wyoming speech-to-text over asyncio TCP (§4, §8.1).

Each connection is a thin pump around :class:`~.protocol.ServerProtocol`; its requests run on
the engine through :mod:`.serving`. Wyoming has no authentication, so like the ``/v1/realtime``
server without a key it refuses to listen beyond loopback unless explicitly allowed. It shares
that server's limits: concurrent connections, audio per connection, idle eviction, and a grace
period on shutdown for open requests.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time

from voxdesk.engine.session import SAMPLE_RATE, StreamingEngine
from voxdesk.engine.wire.wyoming.events import ErrorCode, WyomingError
from voxdesk.engine.wire.wyoming.framing import Event, encode_event
from voxdesk.engine.wire.wyoming.protocol import AudioReceived, EndOfAudio, Request, ServerProtocol, StartRequest
from voxdesk.server.connection import ConnectionLog
from voxdesk.server.realtime.server import InsecureBindError, is_loopback
from voxdesk.server.wyoming.config import WyomingConfig
from voxdesk.server.wyoming.serving import Recognition

__all__ = ["WyomingConnection", "WyomingServer", "check_bind"]

logger = logging.getLogger(__name__)

_READ_SIZE = 64 * 1024


def check_bind(config: WyomingConfig) -> None:
    """Raise ``InsecureBindError`` for a host beyond loopback without ``config.allow_insecure``."""
    if not config.allow_insecure and not is_loopback(config.host):
        raise InsecureBindError(
            f"refusing to serve Wyoming on {config.host}: Wyoming has no authentication; pass "
            "--allow-insecure-no-api-key if the network is trusted"
        )


class WyomingConnection:
    """One client: its protocol state and its open request. Call :meth:`serve`, then :meth:`release`."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        engine: StreamingEngine,
        info: Event,
        config: WyomingConfig,
    ) -> None:
        self.writer = writer
        self.log = ConnectionLog(logger, secrets.token_hex(2))
        self.protocol = ServerProtocol(
            info, max_connection_samples=int(config.max_session_audio * SAMPLE_RATE), log=self.log
        )
        self.recognition: Recognition | None = None
        self._reader = reader
        self._engine = engine
        self._config = config
        self._opened = time.monotonic()

    async def serve(self) -> None:
        """Run until the client leaves, sends what is not Wyoming, or idles too long."""
        self.log.info("Wyoming connection from %s", self.writer.get_extra_info("peername"))
        with contextlib.suppress(ConnectionError):
            while not self.protocol.closed:
                try:
                    async with asyncio.timeout(self._config.idle_timeout):
                        data = await self._reader.read(_READ_SIZE)
                except TimeoutError:
                    if self.protocol.request is Request.FINALIZING:
                        continue  # the client waits for its transcript, it is not idle
                    await self._evict_idle()
                    return
                self.protocol.receive_data(data)
                await self._dispatch()
                await self.flush()

    async def release(self) -> None:
        """Free the open request's engine session and close the socket."""
        if self.recognition is not None:
            await self.recognition.cancel()
        self.writer.close()
        with contextlib.suppress(ConnectionError):
            await self.writer.wait_closed()
        self.log.info("closed after %.1f s", time.monotonic() - self._opened)

    async def flush(self) -> None:
        """Write what the protocol queued. Raises ``ConnectionError`` if the client is gone."""
        data = self.protocol.data_to_send()
        if data:
            self.writer.write(data)
            await self.writer.drain()

    async def announce_shutdown(self) -> None:
        """Tell a client still sending audio that the server is going away and transcribe what it sent."""
        if self.recognition is None or not self.recognition.streaming:
            return
        self.protocol.send_error(ErrorCode.SERVER_SHUTDOWN, "Server shutting down: finishing the current transcript")
        self.recognition.end_audio()
        with contextlib.suppress(ConnectionError):
            await self.flush()

    async def _dispatch(self) -> None:
        for action in self.protocol.events_received():
            if isinstance(action, StartRequest):
                self.recognition = Recognition(
                    self._engine, self.protocol, self.flush, self.log, self._config.max_engine_backlog, action.language
                )
            elif isinstance(action, AudioReceived) and self.recognition is not None:
                await self.recognition.feed(action.samples)
            elif isinstance(action, EndOfAudio) and self.recognition is not None:
                self.recognition.end_audio()

    async def _evict_idle(self) -> None:
        seconds = self._config.idle_timeout
        self.log.info("nothing received for %g s: closing", seconds)
        self.protocol.send_error(ErrorCode.IDLE_TIMEOUT, f"Nothing received for {seconds:g} s: connection closed")
        with contextlib.suppress(ConnectionError):
            await self.flush()


class WyomingServer:
    """A Wyoming speech-to-text server over one loaded engine.

    Raises:
        InsecureBindError: a host beyond loopback without ``config.allow_insecure``.
    """

    def __init__(self, engine: StreamingEngine, info: Event, config: WyomingConfig) -> None:
        check_bind(config)
        self.engine = engine
        self.info = info
        self.config = config
        self._server: asyncio.Server | None = None
        self._connections: set[WyomingConnection] = set()
        self._closing = False

    @property
    def port(self) -> int:
        """The port actually bound (useful with port 0)."""
        assert self._server is not None, "call start() first"
        return int(self._server.sockets[0].getsockname()[1])

    async def start(self) -> None:
        """Bind and start accepting connections."""
        self._server = await asyncio.start_server(self._handle, self.config.host, self.config.port)

    async def shutdown(self) -> None:
        """Stop accepting, let open requests send their transcripts within the grace period,
        then close every connection."""
        self._closing = True
        if self._server is not None:
            self._server.close()
        for connection in list(self._connections):
            await connection.announce_shutdown()
        requests = [c.recognition.task for c in self._connections if c.recognition is not None]
        if requests:
            await asyncio.wait(requests, timeout=self.config.shutdown_grace)
        for connection in list(self._connections):
            connection.writer.close()
        if self._server is not None:
            await self._server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if busy := self._busy():
            await _refuse(writer, busy)
            return
        connection = WyomingConnection(reader, writer, self.engine, self.info, self.config)
        self._connections.add(connection)
        try:
            await connection.serve()
        finally:
            self._connections.discard(connection)
            await connection.release()

    def _busy(self) -> str | None:
        if self._closing:
            return "Server shutting down"
        if len(self._connections) >= self.config.max_sessions:
            return f"All {self.config.max_sessions} sessions are in use"
        return None


async def _refuse(writer: asyncio.StreamWriter, reason: str) -> None:
    """Answer a connection the server cannot take with ``error`` and close it."""
    with contextlib.suppress(ConnectionError):
        writer.write(encode_event(WyomingError(reason, ErrorCode.SERVER_BUSY).to_event()))
        await writer.drain()
    writer.close()
