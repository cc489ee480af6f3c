"""A client whose socket fails with an error that is not a reset: a real ``ETIMEDOUT`` on
loopback. The client stops reading, so its receive window closes while the server still has
answers to write; the server's kernel probes the window and gives up after the server socket's
``TCP_USER_TIMEOUT`` (shortened to one second here, from the ~15 minutes of
``tcp_retries2``), failing the socket with ``[Errno 110] Connection timed out``.

On either dialect, and whether the client's request waits for its final text or not, the
server takes that for the client gone: it frees the connection at once, logs no traceback and
no false idling, and goes on transcribing for the next client."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import numpy as np
import pytest
from websockets.client import ClientProtocol
from websockets.uri import parse_uri

from tests.engine.fake_held_engine import FakeHeldEngine
from tests.fuzz.rig import CrashWatch
from voxdesk.engine.events import UtteranceDone
from voxdesk.engine.remote.realtime import VllmRealtimeEngine, VllmRealtimeSettings
from voxdesk.engine.remote.session import ClientEngine
from voxdesk.engine.remote.wyoming import WyomingEngine, WyomingSettings
from voxdesk.engine.wire.pcm import encode_audio
from voxdesk.engine.wire.realtime.events import InputAudioBufferAppend, InputAudioBufferCommit, SessionUpdate
from voxdesk.engine.wire.wyoming.events import AudioChunk, AudioFormat, AudioStart, AudioStop, Describe, Transcribe
from voxdesk.engine.wire.wyoming.framing import encode_event
from voxdesk.engine.wire.wyoming.info import AsrModel, ServiceInfo
from voxdesk.server.listener import Listener
from voxdesk.server.realtime.server import RealtimeServer, ServerConfig
from voxdesk.server.wyoming.config import WyomingConfig
from voxdesk.server.wyoming.server import WyomingServer

USER_TIMEOUT_MS = 1000  # how long the server's kernel waits for an unacknowledging client
BOUND = 8.0  # how long the server may take to let such a client go (the kernel's second included)
GUARD = 20.0  # only for a server that never lets it go
ANSWERS = 100  # requests that each get an answer the client never reads: some 15-50 KB
INFO = ServiceInfo(AsrModel("fake", ("en",)), "0", {"name": "test", "url": ""}).to_event()
PCM = AudioFormat(16000, 2, 1)
SECOND = np.full(16000, 0.25, np.float32)


@contextlib.asynccontextmanager
async def served(dialect: str, engine: FakeHeldEngine) -> AsyncIterator[Listener[Any, Any]]:
    """A real Voxdesk server of ``dialect`` on ``engine``, whose kernel gives up on a client that
    stops acknowledging after one second: options of its listening socket, which every socket it
    accepts inherits (the server itself sets neither)."""
    server: Listener[Any, Any]
    if dialect == "wyoming":
        server = WyomingServer(engine, INFO, WyomingConfig(port=0))
    else:
        server = RealtimeServer(engine, ServerConfig(port=0))
    await server.start()
    assert server._server is not None
    listening = server._server.sockets[0]
    listening.setsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT, USER_TIMEOUT_MS)
    listening.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)  # a small send queue fills sooner
    try:
        yield server
    finally:
        await server.shutdown()


def wyoming_request(finalizing: bool) -> bytes:
    """A second of audio and its end (the request then waits for its transcript), or none; then
    ``describe`` after ``describe``, each answered with ``info``."""
    request = [Transcribe().to_event(), AudioStart(PCM).to_event(), AudioChunk(PCM, bytes(32000)).to_event()]
    events = [*request, AudioStop().to_event()] if finalizing else []
    events += [Describe().to_event()] * ANSWERS
    return b"".join(encode_event(event) for event in events)


def realtime_frames(finalizing: bool) -> list[str]:
    """A generation of a second of audio, ended by the final commit (it then waits for its
    ``done``), or none; then frames of no known type, each answered with an ``error``."""
    generation = [
        SessionUpdate().to_json(),
        InputAudioBufferCommit(final=False).to_json(),
        InputAudioBufferAppend(audio=encode_audio(SECOND)).to_json(),
        InputAudioBufferCommit(final=True).to_json(),
    ]
    return [*(generation if finalizing else []), *['{"type": "no.such.event"}'] * ANSWERS]


async def unread_client(dialect: str, port: int, finalizing: bool) -> socket.socket:
    """A client on a real socket with a small receive buffer that sends its requests and never
    reads an answer (the WebSocket handshake's aside)."""
    loop = asyncio.get_running_loop()
    client = socket.socket()
    client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    client.setblocking(False)
    await loop.sock_connect(client, ("127.0.0.1", port))
    if dialect == "wyoming":
        await loop.sock_sendall(client, wyoming_request(finalizing))
        return client
    websocket = ClientProtocol(parse_uri(f"ws://127.0.0.1:{port}/v1/realtime"))
    websocket.send_request(websocket.connect())
    await loop.sock_sendall(client, b"".join(websocket.data_to_send()))
    while websocket.handshake_exc is None and not websocket.events_received():
        websocket.receive_data(await loop.sock_recv(client, 4096))  # the 101, and session.created
    assert websocket.handshake_exc is None
    for frame in realtime_frames(finalizing):
        websocket.send_text(frame.encode())
    await loop.sock_sendall(client, b"".join(websocket.data_to_send()))
    return client


def client_engine(dialect: str, port: int) -> ClientEngine[Any]:
    if dialect == "wyoming":
        return WyomingEngine(WyomingSettings(url=f"tcp://127.0.0.1:{port}", max_retries=0))
    return VllmRealtimeEngine(VllmRealtimeSettings(url=f"ws://127.0.0.1:{port}", max_retries=0))


async def one_second() -> AsyncIterator[np.ndarray]:
    yield SECOND


async def until(condition: Callable[[], bool]) -> None:
    """Return once ``condition()`` holds (polled: the server offers nothing to wait on)."""
    while not condition():
        await asyncio.sleep(0.02)


@pytest.mark.timeout(30)  # a server that spins on the dead socket freezes the event loop, and asyncio's timeouts
@pytest.mark.parametrize("finalizing", [True, False], ids=["finalizing", "idle"])
@pytest.mark.parametrize("dialect", ["wyoming", "vllm"])
def test_a_client_whose_socket_timed_out_is_gone_and_the_server_goes_on(
    dialect: str, finalizing: bool, caplog: pytest.LogCaptureFixture
) -> None:
    async def scenario() -> tuple[float, list[str], list[object]]:
        engine = FakeHeldEngine()  # a FAKE engine, held: a final text stays due until released
        watch = CrashWatch()
        async with served(dialect, engine) as server, asyncio.timeout(GUARD):
            with watch.watching():
                client = await unread_client(dialect, server.port, finalizing)
                await until(lambda: server.active_connections == 1)
                started = time.monotonic()
                await until(lambda: server.active_connections == 0)  # the kernel gave up on the client
                took = time.monotonic() - started
                client.close()
                engine.release.set()
                after = client_engine(dialect, server.port)
                await after.load()
                events: list[object] = [event async for event in after.stream(one_second())]
        return took, watch.crashes, events

    caplog.set_level(logging.INFO, logger="voxdesk.server")
    took, crashes, events = asyncio.run(scenario())
    assert crashes == []
    assert took < BOUND
    assert "nothing received for" not in caplog.text, "the client was taken for idle"
    assert isinstance(events[-1], UtteranceDone) and "tick" in events[-1].text, events
