"""The server's side of an engine that stops for good, over real loopback sockets and in every
``make check``: the open sessions of both servers fail with their dialect's error, ``/health``,
new handshakes and new Wyoming connections answer that the engine stopped, and the servers say
so to ``voxdesk serve`` (which exits 1 then). The real fault, vLLM's engine core killed under a
real ``voxdesk serve``, is tests/server/test_vllm_dead_core_serve.py (vLLM tier)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterable, AsyncIterator

import numpy as np
from wyoming.asr import Transcribe
from wyoming.audio import AudioChunk, AudioStart
from wyoming.client import AsyncTcpClient

from tests.engine.realtime.harness import append, commit, get, handshake_status, http_url, recv, session, ws_url
from voxdesk.engine.events import EngineEvent, EngineFault, StreamError, StreamErrorCode, TextDelta
from voxdesk.engine.session import SAMPLE_RATE
from voxdesk.engine.testing import FakeTickEngine
from voxdesk.engine.wire.wyoming.info import AsrModel, ServiceInfo
from voxdesk.server.realtime.server import ServerConfig, running_server
from voxdesk.server.wyoming.config import WyomingConfig
from voxdesk.server.wyoming.server import WyomingServer

WHY = "the fake engine's process was killed"
STOPPED = "Transcription failed: the engine stopped; retry once the server is restarted"
SECOND = np.zeros(SAMPLE_RATE, np.float32)


class FakeDyingEngine(FakeTickEngine):
    """FAKE engine standing in for vLLM (not installed in this tier): each session says "heard"
    for its first audio, then waits; :meth:`die` fails every open session as a dead vLLM core
    does (``engine_fault`` ENGINE) and sets ``stopped``, and later sessions fail at once."""

    def __init__(self) -> None:
        super().__init__()
        self.stopped: str | None = None
        self._dead = asyncio.Event()
        self.running = 0

    def die(self) -> None:
        self.stopped = WHY
        self._dead.set()

    def stream(self, audio: AsyncIterable[np.ndarray]) -> AsyncIterator[EngineEvent]:
        return self._session(audio)

    async def _session(self, audio: AsyncIterable[np.ndarray]) -> AsyncIterator[EngineEvent]:
        chunks = aiter(audio)
        if not self._dead.is_set():
            await anext(chunks)
            yield TextDelta("heard", 0.1)
            self.running += 1
            await self._dead.wait()
            self.running -= 1
        yield StreamError(StreamErrorCode.PROCESSING_ERROR, WHY, 0.1, engine_fault=EngineFault.ENGINE)


async def until_running(engine: FakeDyingEngine, sessions: int) -> None:
    while engine.running < sessions:
        await asyncio.sleep(0.01)


def test_an_engine_that_stops_fails_every_session_on_both_servers_and_health_says_why() -> None:
    async def scenario() -> None:
        engine = FakeDyingEngine()
        info = ServiceInfo(AsrModel("fake", ("en",)), "0", {"name": "test", "url": ""}).to_event()
        wyoming = WyomingServer(engine, info, WyomingConfig(port=0, shutdown_grace=0.2))
        await wyoming.start()
        async with running_server(engine, ServerConfig(port=0)) as server, session(server) as ws:
            stops = asyncio.ensure_future(server.until_engine_stops())
            await commit(ws)
            await append(ws, SECOND)
            assert (await recv(ws))["type"] == "transcription.delta"
            async with AsyncTcpClient("127.0.0.1", wyoming.port, connect_timeout=2, read_timeout=5) as peer:
                await peer.write_event(Transcribe(language="en").event())
                await peer.write_event(AudioStart(rate=SAMPLE_RATE, width=2, channels=1).event())
                await peer.write_event(AudioChunk(rate=SAMPLE_RATE, width=2, channels=1, audio=bytes(3200)).event())
                await asyncio.wait_for(until_running(engine, 2), 5)
                assert (await get(http_url(server, "/health")))[0] == 200
                assert not stops.done()

                engine.die()
                assert await recv(ws) == {"type": "error", "error": STOPPED, "code": "processing_error"}
                while (event := await peer.read_event()) is not None and event.type != "error":
                    pass
                assert event is not None and event.data == {"text": STOPPED, "code": "processing_error"}

                assert await asyncio.wait_for(stops, 5) == WHY
                assert await get(http_url(server, "/health")) == (
                    503,
                    "text/plain",
                    f"the engine stopped: {WHY}".encode(),
                )
                assert await handshake_status(ws_url(server)) == 503
                async with AsyncTcpClient("127.0.0.1", wyoming.port, connect_timeout=2, read_timeout=5) as late:
                    refusal = await late.read_event()
                assert refusal is not None and refusal.data == {
                    "text": f"the engine stopped: {WHY}",
                    "code": "server_busy",
                }
                await asyncio.wait_for(wyoming.until_clients_leave(), 1)  # the grace (0.2 s) is over
            await ws.send(json.dumps({"type": "input_audio_buffer.commit"}))  # its connection still answers
            assert (await recv(ws))["type"] == "error"
        await wyoming.shutdown()

    asyncio.run(asyncio.wait_for(scenario(), 30))
