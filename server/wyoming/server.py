"""``voxdesk serve --wyoming``: Wyoming speech-to-text over asyncio TCP (§4, §8.1).

Each connection is a thin pump around :class:`~voxdesk.engine.wire.wyoming.protocol.ServerProtocol`
(:mod:`~voxdesk.server.wyoming.connection`); its requests run on the engine through
:mod:`~voxdesk.server.wyoming.serving`. Wyoming has no authentication, so like the
``/v1/realtime`` server without a key it refuses to listen beyond loopback unless explicitly
allowed. It shares that server's limits and skeleton (:mod:`~voxdesk.server.listener`):
concurrent connections, audio per connection, idle eviction, and a grace period on shutdown
for open requests.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from voxdesk.engine.session import StreamingEngine
from voxdesk.engine.wire.codes import WireCode
from voxdesk.engine.wire.wyoming.events import WyomingError
from voxdesk.engine.wire.wyoming.framing import Event, encode_event
from voxdesk.server.listener import Listener, refuse_insecure_bind
from voxdesk.server.wyoming.config import WyomingConfig
from voxdesk.server.wyoming.connection import WyomingConnection

__all__ = ["WyomingServer", "check_bind"]

logger = logging.getLogger(__name__)


def check_bind(config: WyomingConfig) -> None:
    """Raise ``InsecureBindError`` for a host beyond loopback without ``config.allow_insecure``."""
    refuse_insecure_bind(
        config.host,
        config.allow_insecure,
        f"refusing to serve Wyoming on {config.host}: Wyoming has no authentication; pass "
        "--allow-insecure-no-api-key if the network is trusted",
    )


class WyomingServer(Listener[asyncio.Server, WyomingConnection]):
    """A Wyoming speech-to-text server over one loaded engine.

    Raises:
        InsecureBindError: a host beyond loopback without ``config.allow_insecure``.
    """

    config: WyomingConfig
    SHUTTING_DOWN = "Server shutting down"
    FULL = "All {} sessions are in use"

    def __init__(self, engine: StreamingEngine, info: Event, config: WyomingConfig) -> None:
        check_bind(config)
        super().__init__(engine, config)
        self.info = info

    async def _listen(self) -> asyncio.Server:
        return await asyncio.start_server(self._handle, self.config.host, self.config.port)

    def _stop_accepting(self, server: asyncio.Server) -> None:
        server.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if busy := self._busy():
            await _refuse(writer, busy)
            return
        await self._serve(WyomingConnection(reader, writer, self.engine, self.info, self.config, logger))


async def _refuse(writer: asyncio.StreamWriter, reason: str) -> None:
    """Answer a connection the server cannot take with ``error`` and close it."""
    with contextlib.suppress(ConnectionError):
        writer.write(encode_event(WyomingError(reason, WireCode.SERVER_BUSY).to_event()))
        await writer.drain()
    writer.close()
