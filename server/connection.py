"""One ``/v1/realtime`` connection: frames in, :class:`ServerProtocol`, frames out.

The loop reads one frame at a time, so a generation that waits for room in the engine's feed
stops the reading and TCP slows the client down (backpressure). A connection silent for
longer than the idle timeout is evicted, unless it waits for its final transcription.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Callable, MutableMapping
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from voxdesk.engine.events import StreamErrorCode
from voxdesk.engine.session import SAMPLE_RATE, StreamingEngine
from voxdesk.engine.wire.realtime.protocol import AudioReceived, EndOfAudio, Generation, ServerProtocol, StartGeneration
from voxdesk.server.config import ServerConfig
from voxdesk.server.metrics import RealtimeMetrics
from voxdesk.server.realtime.serving import Transcription

__all__ = ["Connection", "ConnectionLog"]


class ConnectionLog(logging.LoggerAdapter[logging.Logger]):
    """The server's logger for one connection: every line starts ``conn <id>:``."""

    def __init__(self, logger: logging.Logger, connection_id: str) -> None:
        super().__init__(logger, {"connection": connection_id})
        self.connection_id = connection_id

    def process(self, msg: Any, kwargs: MutableMapping[str, Any]) -> tuple[Any, MutableMapping[str, Any]]:
        return f"conn {self.connection_id}: {msg}", kwargs


class Connection:
    """One client: its protocol state and its current generation on the engine.

    Call :meth:`serve`, then :meth:`release` whatever happened.
    """

    def __init__(
        self,
        socket: ServerConnection,
        engine: StreamingEngine,
        config: ServerConfig,
        metrics: RealtimeMetrics,
        logger: logging.Logger,
        dialect: Callable[..., ServerProtocol] = ServerProtocol,
    ) -> None:
        self.socket = socket
        self.log = ConnectionLog(logger, secrets.token_hex(2))
        self.protocol = dialect(
            config.served_model_name,
            log=self.log,
            skip_model_validation=config.skip_model_validation,
            max_message_samples=int(config.max_message_audio * SAMPLE_RATE),
            max_session_samples=int(config.max_session_audio * SAMPLE_RATE),
        )
        self.generation: Transcription | None = None
        self._engine = engine
        self._config = config
        self._metrics = metrics
        self._write_lock = asyncio.Lock()
        self._dispatch_lock = asyncio.Lock()
        self._later: set[asyncio.Task[None]] = set()
        self._opened = time.monotonic()

    async def serve(self) -> None:
        """Run the connection until the client leaves or is evicted for idling."""
        self._metrics.connections_total.inc()
        self._metrics.connections_active.inc()
        self.log.info("opened from %s", self.socket.remote_address)
        try:
            self.protocol.accept()
            await self.flush()
            while True:
                try:
                    # Not wait_for: on 3.11 it can swallow a cancellation (shutdown) that races a frame.
                    async with asyncio.timeout(self._config.idle_timeout):
                        frame = await self.socket.recv()
                except TimeoutError:
                    if self.protocol.generation is Generation.FINALIZING:
                        continue  # the client is waiting for us, not idle
                    await self._evict_idle()
                    return
                if isinstance(frame, bytes):
                    self.protocol.receive_binary(frame)
                else:
                    self.protocol.receive_text(frame)
                async with self._dispatch_lock:
                    await self._carry_out()
                if self.protocol.has_data_to_send:  # an append (most frames) answers nothing
                    await self.flush()
        except ConnectionClosed:
            pass

    async def release(self) -> None:
        """Free the connection's engine session, whatever state it is in."""
        for task in self._later:
            task.cancel()
        if self.generation is not None:
            await self.generation.cancel()
        self._metrics.connections_active.dec()
        duration = time.monotonic() - self._opened
        self._metrics.connection_duration.observe(duration)
        self.log.info("closed after %.1f s", duration)

    async def flush(self) -> None:
        """Write everything the protocol queued, in order."""
        async with self._write_lock:
            for frame in self.protocol.data_to_send():
                await self.socket.send(frame)

    async def announce_shutdown(self) -> None:
        """Tell a client with a generation running that the server is going away, and end
        that generation's audio so it finishes with what it has."""
        if self.generation is None or not self.generation.running:
            return
        self.generation.end_audio()
        self.protocol.send_error(
            StreamErrorCode.SERVER_SHUTDOWN, "Server shutting down: finishing the current transcription"
        )
        with contextlib.suppress(ConnectionClosed):
            await self.flush()

    async def _engine_output(self) -> None:
        """After the engine's output: write it, and carry out what it queued (the OpenAI dialect
        starts the next waiting turn when one is done) in a task of its own, in order."""
        await self.flush()
        if self.protocol.has_events:
            task = asyncio.create_task(self._dispatch())
            self._later.add(task)
            task.add_done_callback(self._later.discard)

    async def _dispatch(self) -> None:
        with contextlib.suppress(ConnectionClosed):
            async with self._dispatch_lock:
                await self._carry_out()
                await self.flush()

    async def _carry_out(self) -> None:
        for action in self.protocol.events_received():
            if isinstance(action, StartGeneration):
                self.log.debug("generation started")
                self.generation = Transcription(
                    self._engine,
                    self.protocol,
                    self._engine_output,
                    self.log,
                    self._metrics,
                    self._config.max_engine_backlog,
                )
            elif isinstance(action, AudioReceived) and self.generation is not None:
                await self.generation.feed(action.samples)
            elif isinstance(action, EndOfAudio) and self.generation is not None and self.generation.running:
                self.generation.end_audio()

    async def _evict_idle(self) -> None:
        seconds = self._config.idle_timeout
        self.log.info("no message for %g s: closing", seconds)
        self.protocol.send_error(StreamErrorCode.IDLE_TIMEOUT, f"No message for {seconds:g} s: session closed")
        with contextlib.suppress(ConnectionClosed):
            await self.flush()
            await self.socket.close(1000, "idle timeout")
