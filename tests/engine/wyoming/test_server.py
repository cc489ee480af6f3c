"""The Wyoming server in-process over a real loopback socket, the official ``wyoming`` client
on the other side, and a fake engine where the test is about the server: session limits, idle
eviction, shutdown, engine failure, several requests on one connection, the loopback rule."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterable, AsyncIterator

import numpy as np
import pytest
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.event import Event
from wyoming.info import Describe

from voxdesk.engine.events import EngineEvent, TextDelta
from voxdesk.engine.session import StreamingEngine
from voxdesk.engine.testing import FakeTickEngine
from voxdesk.engine.wire.wyoming.info import AsrModel, ServiceInfo
from voxdesk.server.listener import InsecureBindError
from voxdesk.server.wyoming.config import WyomingConfig
from voxdesk.server.wyoming.server import WyomingServer

INFO = ServiceInfo(AsrModel("fake", ("en",)), "0", {"name": "test", "url": ""}).to_event()
SECOND = AudioChunk(rate=16000, width=2, channels=1, audio=bytes(32000)).event()


class FailingEngine(FakeTickEngine):
    """FAKE engine that says one word, then fails."""

    def stream(self, audio: AsyncIterable[np.ndarray]) -> AsyncIterator[EngineEvent]:
        return self._fail(audio)

    async def _fail(self, audio: AsyncIterable[np.ndarray]) -> AsyncIterator[EngineEvent]:
        async for _ in audio:
            yield TextDelta("partly", 0.1)
            raise RuntimeError("the decoder broke")


@contextlib.asynccontextmanager
async def running(engine: StreamingEngine | None = None, **config: float) -> AsyncIterator[WyomingServer]:
    server = WyomingServer(engine or FakeTickEngine(), INFO, WyomingConfig(port=0, **config))  # type: ignore[arg-type]
    await server.start()
    try:
        yield server
    finally:
        await server.shutdown()


async def events_until_eof(client: AsyncTcpClient) -> list[Event]:
    events = []
    while (event := await client.read_event()) is not None:
        events.append(event)
    return events


def client(server: WyomingServer) -> AsyncTcpClient:
    return AsyncTcpClient("127.0.0.1", server.port, connect_timeout=2, read_timeout=20)


def test_two_requests_on_one_connection_each_get_a_transcript() -> None:
    async def scenario() -> list[str]:
        async with running() as server, client(server) as peer:
            texts = []
            for _ in range(2):
                for event in (AudioStart(rate=16000, width=2, channels=1).event(), SECOND, AudioStop().event()):
                    await peer.write_event(event)
                while (event := await peer.read_event()) is not None and event.type != "transcript-stop":
                    if event.type == "transcript":
                        texts.append(event.data["text"])
            return texts

    assert asyncio.run(scenario()) == ["tick " * 12] * 2


def test_a_connection_beyond_the_session_limit_is_refused_with_an_error() -> None:
    async def scenario() -> list[Event]:
        async with running(max_sessions=1) as server, client(server) as first:
            await first.write_event(Describe().event())
            assert await first.read_event() is not None  # the first connection holds the one session
            async with client(server) as second:
                return await events_until_eof(second)

    ((refusal),) = asyncio.run(scenario())
    assert refusal.type == "error" and refusal.data["code"] == "server_busy"


def test_an_idle_connection_is_evicted_with_an_error() -> None:
    async def scenario() -> list[Event]:
        async with running(idle_timeout=0.2) as server, client(server) as peer:
            return await events_until_eof(peer)

    ((error),) = asyncio.run(scenario())
    assert error.type == "error" and error.data["code"] == "idle_timeout"


def test_shutdown_finishes_the_open_request_with_its_transcript() -> None:
    async def scenario() -> list[Event]:
        server = WyomingServer(FakeTickEngine(), INFO, WyomingConfig(port=0))
        await server.start()
        async with client(server) as peer:
            await peer.write_event(AudioStart(rate=16000, width=2, channels=1).event())
            await peer.write_event(SECOND)
            await peer.write_event(Describe().event())
            info = await peer.read_event()  # once it answers, the chunk before was read
            assert info is not None and info.type == "info"
            await server.shutdown()
            return await events_until_eof(peer)

    events = asyncio.run(scenario())
    types = [event.type for event in events]
    assert types[-2:] == ["transcript", "transcript-stop"] and events[-2].data["text"] == "tick " * 12
    assert "transcript-start" in types and types.count("error") == 1  # chunks may come before the error
    assert events[types.index("error")].data["code"] == "server_shutdown"


def test_an_engine_failure_is_an_error_then_the_transcript_of_what_was_heard() -> None:
    async def scenario() -> list[Event]:
        async with running(FailingEngine()) as server, client(server) as peer:
            await peer.write_event(SECOND)
            await peer.write_event(SECOND)
            await peer.write_event(AudioStop().event())
            events = []
            while (event := await peer.read_event()) is not None and event.type != "transcript-stop":
                events.append(event)
            return events

    events = asyncio.run(scenario())
    assert [event.type for event in events] == ["transcript-start", "transcript-chunk", "error", "transcript"]
    assert events[2].data == {"text": "Internal error during transcription", "code": "processing_error"}
    assert events[3].data["text"] == "partly"


def test_a_host_beyond_loopback_needs_the_explicit_flag() -> None:
    with pytest.raises(InsecureBindError, match="Wyoming has no authentication"):
        WyomingServer(FakeTickEngine(), INFO, WyomingConfig(host="0.0.0.0"))
    WyomingServer(FakeTickEngine(), INFO, WyomingConfig(host="0.0.0.0", allow_insecure=True))
    WyomingServer(FakeTickEngine(), INFO, WyomingConfig(host="::1"))
