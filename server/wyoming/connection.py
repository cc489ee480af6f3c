"""One Wyoming connection: TCP bytes in, :class:`ServerProtocol`, bytes out."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterator

from voxdesk.engine.session import SAMPLE_RATE, StreamingEngine
from voxdesk.engine.wire.codes import WireCode
from voxdesk.engine.wire.core import AudioReceived, EndOfAudio
from voxdesk.engine.wire.wyoming.framing import Event
from voxdesk.engine.wire.wyoming.protocol import Request, ServerProtocol, StartRequest
from voxdesk.server.connection import Connection, Ending
from voxdesk.server.wyoming.config import WyomingConfig
from voxdesk.server.wyoming.serving import Recognition

__all__ = ["WyomingConnection"]

_READ_SIZE = 64 * 1024
_NOTICES = {
    Ending.IDLE: (WireCode.IDLE_TIMEOUT, "Nothing received for {seconds:g} s: connection closed"),
    Ending.SHUTDOWN: (WireCode.SERVER_SHUTDOWN, "Server shutting down: finishing the current transcript"),
}


@contextlib.contextmanager
def _transport() -> Iterator[None]:
    """Any error of the client's socket as the client gone (``ConnectionError``): a reset is one
    already, a client that stopped acknowledging (``ETIMEDOUT``) or became unreachable is
    another ``OSError``, and the connection must end alike."""
    try:
        yield
    except ConnectionError:
        raise
    except OSError as error:
        raise ConnectionAbortedError(error.errno, error.strerror) from error


class WyomingConnection(Connection[ServerProtocol, Recognition]):
    """One TCP client: its protocol state and its open request on the engine. It ends when the
    client closes its side, sends what is not Wyoming or its socket fails; the server closes the
    socket after it."""

    gone = (ConnectionError,)
    audio = AudioReceived
    end_of_audio = EndOfAudio

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        engine: StreamingEngine,
        info: Event,
        config: WyomingConfig,
        logger: logging.Logger,
    ) -> None:
        super().__init__(engine, config, logger)
        self.writer = writer
        self.protocol = ServerProtocol(
            info, max_connection_samples=int(config.max_session_audio * SAMPLE_RATE), log=self.log
        )
        self._reader = reader

    async def release(self) -> None:
        """Free the open request's engine session and close the socket."""
        await super().release()
        self.writer.close()
        with contextlib.suppress(OSError):  # the socket's last error, already taken for the client gone
            await self.writer.wait_closed()

    async def flush(self) -> None:
        """Write what the protocol queued. Raises ``ConnectionError`` if the client is gone."""
        data = self.protocol.data_to_send()
        if data:
            with _transport():
                self.writer.write(data)
                await self.writer.drain()

    async def close(self, ending: Ending) -> None:
        """Close the socket (Wyoming has no closing handshake: the error said why)."""
        self.writer.close()

    def _peer(self) -> object:
        return self.writer.get_extra_info("peername")

    async def _receive(self) -> None:
        with _transport():
            data = await self._reader.read(_READ_SIZE)
        self.protocol.receive_data(data)

    def _ended(self) -> bool:
        return self.protocol.closed  # the client closed its side, or sent what is not Wyoming

    def _awaits_final(self) -> bool:
        return self.protocol.request is Request.FINALIZING

    def _open(self, action: object) -> Recognition | None:
        if not isinstance(action, StartRequest):
            return None
        return Recognition(self._channel(self.flush), self.protocol, action.language)

    def _notify(self, ending: Ending) -> None:
        code, message = _NOTICES[ending]
        self.protocol.send_error(code, message.format(seconds=self._config.idle_timeout))
