"""One ``/v1/realtime`` connection: WebSocket frames in, a :class:`SessionCore` dialect, frames out."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from voxdesk.engine.session import SAMPLE_RATE, StreamingEngine
from voxdesk.engine.wire.codes import WireCode
from voxdesk.engine.wire.core import AudioReceived, EndOfAudio
from voxdesk.engine.wire.realtime.protocol import ServerProtocol
from voxdesk.engine.wire.session_core import Generation, SessionCore, StartGeneration
from voxdesk.server.config import ServerConfig
from voxdesk.server.connection import Connection, Ending
from voxdesk.server.metrics import RealtimeMetrics
from voxdesk.server.realtime.serving import Transcription

__all__ = ["RealtimeConnection"]

_NOTICES = {
    Ending.IDLE: (WireCode.IDLE_TIMEOUT, "No message for {seconds:g} s: session closed"),
    Ending.SHUTDOWN: (WireCode.SERVER_SHUTDOWN, "Server shutting down: finishing the current transcription"),
}
_CLOSES = {Ending.IDLE: (1000, "idle timeout"), Ending.SHUTDOWN: (1001, "server shutting down")}


class RealtimeConnection(Connection[SessionCore, Transcription]):
    """One WebSocket client: its protocol state and its current generation on the engine."""

    gone = (ConnectionClosed,)
    audio = AudioReceived
    end_of_audio = EndOfAudio

    def __init__(
        self,
        socket: ServerConnection,
        engine: StreamingEngine,
        config: ServerConfig,
        metrics: RealtimeMetrics,
        logger: logging.Logger,
        dialect: Callable[..., SessionCore] = ServerProtocol,
    ) -> None:
        super().__init__(engine, config, logger)
        self.socket = socket
        self.protocol = dialect(
            config.served_model_name,
            log=self.log,
            skip_model_validation=config.skip_model_validation,
            max_message_samples=int(config.max_message_audio * SAMPLE_RATE),
            max_session_samples=int(config.max_session_audio * SAMPLE_RATE),
            max_pending_samples=int(config.max_pending_audio * SAMPLE_RATE),
        )
        self.protocol.accept()
        self._metrics = metrics
        self._write_lock = asyncio.Lock()
        self._dispatch_lock = asyncio.Lock()
        self._later: set[asyncio.Task[None]] = set()

    async def serve(self) -> None:
        """Run the connection until the client leaves or is evicted for idling."""
        self._metrics.connections_total.inc()
        self._metrics.connections_active.inc()
        await super().serve()

    async def release(self) -> None:
        """Free the connection's engine session, whatever state it is in."""
        for task in self._later:
            task.cancel()
        await super().release()
        self._metrics.connections_active.dec()
        self._metrics.connection_duration.observe(self.seconds_open)

    async def flush(self) -> None:
        """Write everything the protocol queued, in order."""
        async with self._write_lock:
            for frame in self.protocol.data_to_send():
                await self.socket.send(frame)

    async def close(self, ending: Ending) -> None:
        """Close with 1000 (idle) or 1001 (going away)."""
        await self.socket.close(*_CLOSES[ending])

    def _peer(self) -> object:
        return self.socket.remote_address

    async def _receive(self) -> None:
        frame = await self.socket.recv()
        if isinstance(frame, bytes):
            self.protocol.receive_binary(frame)
        else:
            self.protocol.receive_text(frame)

    async def _carry_out(self) -> None:
        async with self._dispatch_lock:
            await super()._carry_out()

    async def _reply(self) -> None:
        if self.protocol.has_data_to_send:  # an append (most frames) answers nothing
            await self.flush()

    def _awaits_final(self) -> bool:
        return self.protocol.generation is Generation.FINALIZING

    def _open(self, action: object) -> Transcription | None:
        if not isinstance(action, StartGeneration):
            return None
        self.log.debug("generation started")
        return Transcription(self._channel(self._engine_output), self.protocol, self._metrics)

    def _notify(self, ending: Ending) -> None:
        code, message = _NOTICES[ending]
        self.protocol.send_error(code, message.format(seconds=self._config.idle_timeout))

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
                await super()._carry_out()
                await self.flush()
