"""``voxdesk serve``: vLLM's ``/v1/realtime`` over the ``websockets`` asyncio server, and
OpenAI's Realtime transcription sessions on the same path (``?intent=transcription``).

Each connection is a thin pump around :class:`~voxdesk.engine.wire.realtime.protocol.ServerProtocol`
(:mod:`~voxdesk.server.realtime.connection`), its generations run on the engine through
:mod:`~voxdesk.server.realtime.serving`, and plain HTTP is answered by :mod:`~voxdesk.server.http`;
the listener, the connection loop and the engine fold are every dialect's (:mod:`~voxdesk.server.listener`,
:mod:`~voxdesk.server.connection`, :mod:`~voxdesk.server.serving`).
Beyond vLLM 0.33 it evicts idle connections, caps concurrent sessions and audio per session,
answers binary frames instead of dropping the socket, frees everything on abrupt disconnects,
and drains open generations on shutdown. ``/health`` means ready: 503 while the engine loads
(:meth:`RealtimeServer.load_engine`), while the server drains (:meth:`RealtimeServer.drain`) and
once the engine stopped for good (:mod:`~voxdesk.server.health`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import ssl
from collections.abc import AsyncIterator, Callable

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.http11 import Request, Response

from voxdesk.engine.audio.silero import SileroVad
from voxdesk.engine.session import ProgressCallback, StreamingEngine
from voxdesk.engine.wire.openai.events import is_openai_path
from voxdesk.engine.wire.openai.protocol import OpenAIServerProtocol
from voxdesk.engine.wire.realtime.protocol import ServerProtocol
from voxdesk.engine.wire.session_core import SessionCore
from voxdesk.server import http
from voxdesk.server.config import ServerConfig
from voxdesk.server.listener import InsecureBindError, Listener, refuse_insecure_bind
from voxdesk.server.metrics import RealtimeMetrics
from voxdesk.server.realtime.connection import RealtimeConnection

__all__ = ["InsecureBindError", "RealtimeServer", "ServerConfig", "running_server"]

logger = logging.getLogger(__name__)


class RealtimeServer(Listener[Server, RealtimeConnection]):
    """A ``/v1/realtime`` server over one loaded engine.

    Raises:
        InsecureBindError: a host beyond loopback without an API key or
            ``config.allow_insecure_no_api_key``.
    """

    config: ServerConfig

    def __init__(self, engine: StreamingEngine, config: ServerConfig, loaded: bool = True) -> None:
        refuse_insecure_bind(
            config.host,
            bool(config.api_key) or config.allow_insecure_no_api_key,
            f"refusing to listen on {config.host} without an API key: pass --api-key (or set "
            "VOXDESK_API_KEY), or --allow-insecure-no-api-key if the network is trusted",
        )
        super().__init__(engine, config)
        self.metrics = RealtimeMetrics()
        self._loading = not loaded
        self._draining = False

    async def load_engine(self, progress: ProgressCallback | None = None) -> None:
        """Load the engine while the server answers ``/health`` with 503 (when built with
        ``loaded=False`` and started first), then take sessions."""
        await self.engine.load(progress)
        self._loading = False

    async def drain(self) -> None:
        """Stop taking sessions (``/health`` and new handshakes answer 503) and wait, up to the
        drain timeout, until no generation runs: the utterances in progress end as their
        clients end them. Then call :meth:`shutdown`."""
        self._draining = True
        deadline = asyncio.get_running_loop().time() + self.config.drain_timeout
        while running := [c.job.task for c in self._connections if c.job and c.job.running]:
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                logger.info("drain: %d transcriptions still running at the drain timeout", len(running))
                return
            logger.info("drain: waiting for %d running transcriptions", len(running))
            await asyncio.wait(running, timeout=remaining)

    async def serve_forever(self) -> None:
        """Run until cancelled or shut down."""
        assert self._server is not None, "call start() first"
        await self._server.wait_closed()

    async def _listen(self) -> Server:
        context = None
        if self.config.ssl_certfile:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(self.config.ssl_certfile, self.config.ssl_keyfile)
        return await serve(
            self._handle,
            self.config.host,
            self.config.port,
            ssl=context,
            process_request=self._process_request,
            max_size=self.config.max_frame_bytes,
            ping_interval=self.config.ping_interval,
            ping_timeout=self.config.ping_timeout,
            server_header="voxdesk",
        )

    def _stop_accepting(self, server: Server) -> None:
        server.close(close_connections=False)

    def _process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        return http.route(request, self.config, self.metrics, self._busy(), self._unready())

    def _unready(self) -> str | None:
        if self._loading:
            return "loading the engine"
        if self._closing or self._draining:
            return "draining"
        return super()._unready()

    async def _handle(self, socket: ServerConnection) -> None:
        openai = socket.request is not None and is_openai_path(socket.request.path)
        dialect: Callable[..., SessionCore] = ServerProtocol
        if openai:  # its server_vad scores speech with a fresh Silero VAD for each turn detection
            dialect = functools.partial(OpenAIServerProtocol, scorers=lambda: SileroVad().probabilities)
        await self._serve(RealtimeConnection(socket, self.engine, self.config, self.metrics, logger, dialect))


@contextlib.asynccontextmanager
async def running_server(engine: StreamingEngine, config: ServerConfig) -> AsyncIterator[RealtimeServer]:
    """``async with running_server(engine, config) as server:`` started, then shut down."""
    server = RealtimeServer(engine, config)
    await server.start()
    try:
        yield server
    finally:
        await server.shutdown()
