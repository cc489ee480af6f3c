"""``voxdesk serve``: vLLM's ``/v1/realtime`` over the ``websockets`` asyncio server.

Each connection is a thin pump around :class:`~engine.realtime.protocol.ServerProtocol`:
frames in, actions to the engine, engine events back out. Beyond vLLM 0.33 it evicts idle
connections, caps concurrent sessions and audio per session, answers binary frames instead
of dropping the socket, frees everything on abrupt disconnects, and drains open generations
on shutdown.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
import json
import logging
import secrets
import ssl
import time
from collections.abc import AsyncIterator, MutableMapping
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from voxdesk.engine.clock import DeliveryClock
from voxdesk.engine.errors import VoxdeskError
from voxdesk.engine.events import ProvisionalText, StreamError, TextDelta, UtteranceDone
from voxdesk.engine.realtime.events import ErrorCode, Usage
from voxdesk.engine.realtime.metrics import CONTENT_TYPE, RealtimeMetrics
from voxdesk.engine.realtime.protocol import AudioReceived, EndOfAudio, Generation, ServerProtocol, StartGeneration
from voxdesk.engine.session import SAMPLE_RATE, AudioFeed, StreamingEngine

__all__ = ["InsecureBindError", "RealtimeServer", "ServerConfig", "running_server"]

logger = logging.getLogger(__name__)


class InsecureBindError(VoxdeskError, RuntimeError):
    """Refusal to listen beyond loopback without an API key."""


@dataclass(frozen=True)
class ServerConfig:
    """Everything ``voxdesk serve`` can be told. Durations in seconds."""

    served_model_name: str = "voxdesk-builtin"
    host: str = "127.0.0.1"
    port: int = 8000
    api_key: str | None = None
    ssl_certfile: str | None = None
    ssl_keyfile: str | None = None
    allow_insecure_no_api_key: bool = False
    skip_model_validation: bool = False
    idle_timeout: float = 30.0
    max_sessions: int = 64
    max_session_audio: float = 4 * 3600.0
    max_message_audio: float = 600.0
    max_engine_backlog: float = 30.0
    shutdown_grace: float = 10.0
    max_frame_bytes: int = 16 * 1024 * 1024  # uvicorn's default, which vLLM runs under
    ping_interval: float = 20.0
    ping_timeout: float = 20.0


class ConnectionLog(logging.LoggerAdapter[logging.Logger]):
    """The server's logger for one connection: every line starts ``conn <id>:``."""

    def __init__(self, connection_id: str) -> None:
        super().__init__(logger, {"connection": connection_id})
        self.connection_id = connection_id

    def process(self, msg: Any, kwargs: MutableMapping[str, Any]) -> tuple[Any, MutableMapping[str, Any]]:
        return f"conn {self.connection_id}: {msg}", kwargs


@dataclass(eq=False)
class _Connection:
    """One client: its protocol state, engine feed and generation task."""

    socket: ServerConnection
    protocol: ServerProtocol
    log: ConnectionLog
    write_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    feed: AudioFeed | None = None
    clock: DeliveryClock | None = None
    fed_samples: int = 0  # audio pushed into the current generation
    generation: asyncio.Task[None] | None = None

    async def flush(self) -> None:
        """Write everything the protocol queued, in order."""
        async with self.write_lock:
            for frame in self.protocol.data_to_send():
                await self.socket.send(frame)


class RealtimeServer:
    """A ``/v1/realtime`` server over one loaded engine."""

    def __init__(self, engine: StreamingEngine, config: ServerConfig) -> None:
        if not config.api_key and not config.allow_insecure_no_api_key and not _is_loopback(config.host):
            raise InsecureBindError(
                f"refusing to listen on {config.host} without an API key: pass --api-key (or set "
                "VOXDESK_API_KEY), or --allow-insecure-no-api-key if the network is trusted"
            )
        self.engine = engine
        self.config = config
        self.metrics = RealtimeMetrics()
        self._server: Server | None = None
        self._connections: set[_Connection] = set()
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
        context = None
        if self.config.ssl_certfile:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(self.config.ssl_certfile, self.config.ssl_keyfile)
        self._server = await serve(
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

    async def serve_forever(self) -> None:
        """Run until cancelled or shut down."""
        assert self._server is not None, "call start() first"
        await self._server.wait_closed()

    async def shutdown(self) -> None:
        """Stop accepting, let open generations finish (``transcription.done``) within the grace
        period, then close every connection with code 1001."""
        self._closing = True
        if self._server is not None:
            self._server.close(close_connections=False)
        for connection in list(self._connections):
            if connection.feed is not None:
                connection.feed.end()
                connection.protocol.send_error(
                    ErrorCode.SERVER_SHUTDOWN, "Server shutting down: finishing the current transcription"
                )
                with contextlib.suppress(ConnectionClosed):
                    await connection.flush()
        generations = [c.generation for c in self._connections if c.generation is not None]
        if generations:
            await asyncio.wait(generations, timeout=self.config.shutdown_grace)
        for connection in list(self._connections):
            await connection.socket.close(1001, "server shutting down")
        if self._server is not None:
            await self._server.wait_closed()

    # HTTP: health, models, metrics, auth and capacity checks before the upgrade

    def _process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        path = request.path.split("?", 1)[0]
        if path == "/health":
            return _response(HTTPStatus.OK, b"")
        if path == "/metrics":
            return _response(HTTPStatus.OK, self.metrics.render(), CONTENT_TYPE)
        if path.startswith("/v1") and not self._authorized(request):
            self.metrics.refused.inc()
            return _json_response(HTTPStatus.UNAUTHORIZED, {"error": "Unauthorized"})
        if path == "/v1/models":
            model = {"id": self.config.served_model_name, "object": "model", "created": 0, "owned_by": "voxdesk"}
            return _json_response(HTTPStatus.OK, {"object": "list", "data": [model]})
        if path != "/v1/realtime":
            return _json_response(HTTPStatus.NOT_FOUND, {"error": "Not Found"})
        if self._closing or len(self._connections) >= self.config.max_sessions:
            self.metrics.refused.inc()
            reason = "shutting down" if self._closing else f"all {self.config.max_sessions} sessions are in use"
            return _json_response(HTTPStatus.SERVICE_UNAVAILABLE, {"error": f"Server busy: {reason}"})
        return None

    def _authorized(self, request: Request) -> bool:
        if not self.config.api_key:
            return True
        given = request.headers.get("Authorization", "")
        return hmac.compare_digest(given.encode(), f"Bearer {self.config.api_key}".encode())

    # WebSocket: one pump per connection

    async def _handle(self, socket: ServerConnection) -> None:
        log = ConnectionLog(secrets.token_hex(2))
        connection = _Connection(socket, self._new_protocol(log), log)
        self._connections.add(connection)
        self.metrics.connections_total.inc()
        self.metrics.connections_active.inc()
        opened = time.monotonic()
        log.info("opened from %s", socket.remote_address)
        try:
            connection.protocol.accept()
            await connection.flush()
            while True:
                try:
                    # Not wait_for: on 3.11 it can swallow a cancellation (shutdown) that races a frame.
                    async with asyncio.timeout(self.config.idle_timeout):
                        frame = await socket.recv()
                except TimeoutError:
                    if connection.protocol.generation is Generation.FINALIZING:
                        continue  # the client is waiting for us, not idle
                    await self._evict_idle(connection)
                    return
                if isinstance(frame, bytes):
                    connection.protocol.receive_binary()
                else:
                    connection.protocol.receive_text(frame)
                await self._dispatch(connection)
                await connection.flush()
        except ConnectionClosed:
            pass
        finally:
            await self._release(connection)
            self.metrics.connections_active.dec()
            duration = time.monotonic() - opened
            self.metrics.connection_duration.observe(duration)
            log.info("closed after %.1f s", duration)

    def _new_protocol(self, log: ConnectionLog) -> ServerProtocol:
        config = self.config
        return ServerProtocol(
            config.served_model_name,
            log=log,
            skip_model_validation=config.skip_model_validation,
            max_message_samples=int(config.max_message_audio * SAMPLE_RATE),
            max_session_samples=int(config.max_session_audio * SAMPLE_RATE),
        )

    async def _dispatch(self, connection: _Connection) -> None:
        for action in connection.protocol.events_received():
            if isinstance(action, StartGeneration):
                connection.log.debug("generation started")
                connection.feed = AudioFeed(self.config.max_engine_backlog)
                connection.clock = DeliveryClock()
                connection.fed_samples = 0
                connection.generation = asyncio.create_task(self._generate(connection, connection.feed))
            elif isinstance(action, AudioReceived):
                await self._feed(connection, action)
            elif isinstance(action, EndOfAudio) and connection.feed is not None:
                connection.feed.end()

    async def _feed(self, connection: _Connection, audio: AudioReceived) -> None:
        """Hand audio to the engine. When the engine is behind this waits, and so stops
        reading the socket: TCP slows a client that streams a file faster than real time."""
        feed, clock = connection.feed, connection.clock
        if feed is None or clock is None or not await feed.put(audio.samples):
            return  # the generation ended (engine failure, shutdown): its audio is moot
        self.metrics.audio_seconds.inc(len(audio.samples) / SAMPLE_RATE)
        connection.fed_samples += len(audio.samples)
        clock.record(connection.fed_samples, time.perf_counter())

    async def _generate(self, connection: _Connection, feed: AudioFeed) -> None:
        """Run one engine session and report it as deltas and one ``done``."""
        protocol, clock = connection.protocol, connection.clock
        text, usage, boundary, first_delta = "", Usage(), False, True
        self.metrics.sessions_active.inc()
        try:
            async for event in self.engine.stream(feed):
                if isinstance(event, TextDelta):
                    piece = (" " if boundary and text else "") + event.text
                    boundary = False
                    text += piece
                    protocol.send_delta(piece)
                    if first_delta and piece.strip() and clock is not None:
                        first_delta = False
                        self.metrics.first_delta_latency.observe(
                            time.perf_counter() - clock.delivered_at(event.audio_time)
                        )
                elif isinstance(event, ProvisionalText):
                    separate = boundary and text and event.text
                    protocol.send_provisional((" " if separate else "") + event.text)
                elif isinstance(event, UtteranceDone):
                    boundary = True
                    usage = _add_usage(usage, event)
                elif isinstance(event, StreamError):
                    connection.log.warning("engine failed: %s", event.message)
                    protocol.generation_failed("Transcription failed; start a new commit")
                    return
                await connection.flush()
            protocol.send_done(text, usage)
            connection.log.debug("generation done (%d characters)", len(text))
        except ConnectionClosed:
            return
        except Exception:
            connection.log.exception("realtime generation failed")
            protocol.generation_failed("Internal error during transcription")
        finally:
            self.metrics.sessions_active.dec()
            feed.end()  # releases a reader waiting for room in it
            connection.feed = None
            with contextlib.suppress(ConnectionClosed):
                await connection.flush()

    async def _evict_idle(self, connection: _Connection) -> None:
        seconds = self.config.idle_timeout
        connection.log.info("no message for %g s: closing", seconds)
        connection.protocol.send_error(ErrorCode.IDLE_TIMEOUT, f"No message for {seconds:g} s: session closed")
        with contextlib.suppress(ConnectionClosed):
            await connection.flush()
            await connection.socket.close(1000, "idle timeout")

    async def _release(self, connection: _Connection) -> None:
        """Free the connection's engine session, whatever state it is in."""
        self._connections.discard(connection)
        if connection.generation is not None and not connection.generation.done():
            connection.generation.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await connection.generation


def _add_usage(usage: Usage, done: UtteranceDone) -> Usage:
    prompt = usage.prompt_tokens or done.stats.prompt_tokens  # vLLM counts the first prompt only
    completion = (usage.completion_tokens or 0) + done.stats.completion_tokens
    return Usage(prompt_tokens=prompt, total_tokens=prompt + completion, completion_tokens=completion)


def _response(status: HTTPStatus, body: bytes, content_type: str = "text/plain") -> Response:
    headers = Headers([("Content-Type", content_type), ("Content-Length", str(len(body)))])
    return Response(status.value, status.phrase, headers, body)


def _json_response(status: HTTPStatus, payload: object) -> Response:
    return _response(status, json.dumps(payload).encode(), "application/json")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@contextlib.asynccontextmanager
async def running_server(engine: StreamingEngine, config: ServerConfig) -> AsyncIterator[RealtimeServer]:
    """``async with running_server(engine, config) as server:`` started, then shut down."""
    server = RealtimeServer(engine, config)
    await server.start()
    try:
        yield server
    finally:
        await server.shutdown()
