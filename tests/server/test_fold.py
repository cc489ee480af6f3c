"""The one engine-events-to-text fold (:mod:`voxdesk.server.serving`) under both dialects'
servers, over real loopback sockets: the same engine events give the same text on
``/v1/realtime`` (a ``websockets`` client) and on Wyoming (the official ``wyoming`` client)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any

import numpy as np
from wyoming.audio import AudioChunk, AudioStop
from wyoming.client import AsyncTcpClient

from tests.engine.realtime.harness import append, commit, recv_text, session
from voxdesk.engine.events import EngineEvent, ProvisionalText, StreamError, StreamErrorCode, TextDelta, UtteranceDone
from voxdesk.engine.session import SAMPLE_RATE
from voxdesk.engine.testing import FakeTickEngine
from voxdesk.engine.wire.wyoming.info import AsrModel, ServiceInfo
from voxdesk.server.realtime.server import ServerConfig, running_server
from voxdesk.server.wyoming.config import WyomingConfig
from voxdesk.server.wyoming.server import WyomingServer

SCRIPT: list[EngineEvent] = [
    TextDelta("Turn left.", 0.5),
    UtteranceDone("Turn left.", 0.6, 0.1, 0.5),
    ProvisionalText("Then", 0.8),
    StreamError(StreamErrorCode.CONNECTION_LOST, "lost the decoder; retried", 0.8, fatal=False),
    TextDelta("Then stop.", 1.2),
    UtteranceDone("Then stop.", 1.3, 0.7, 1.2),
]
HEARD = "Turn left. Then stop."
SECOND = np.zeros(SAMPLE_RATE, np.float32)


class FakeScriptedEngine(FakeTickEngine):
    """FAKE engine: reads the audio to its end, then says :data:`SCRIPT`, whatever it heard."""

    def stream(self, audio: AsyncIterable[np.ndarray]) -> AsyncIterator[EngineEvent]:
        return self._script(audio)

    async def _script(self, audio: AsyncIterable[np.ndarray]) -> AsyncIterator[EngineEvent]:
        async for _ in audio:
            pass
        for event in SCRIPT:
            yield event


async def over_realtime() -> list[dict[str, Any]]:
    """Every event after ``session.update`` up to ``transcription.done`` (or an ``error``)."""
    engine = FakeScriptedEngine()
    async with running_server(engine, ServerConfig(port=0)) as server, session(server, provisional=True) as ws:
        await commit(ws)
        await append(ws, SECOND)
        await commit(ws, final=True)
        events: list[dict[str, Any]] = []
        while not events or events[-1]["type"] not in ("transcription.done", "error"):
            events.append(json.loads(await recv_text(ws)))
        return events


async def over_wyoming() -> list[dict[str, Any]]:
    """Every event's type and text after the audio, up to ``transcript-stop``."""
    info = ServiceInfo(AsrModel("fake", ("en",)), "0", {"name": "test", "url": ""}).to_event()
    server = WyomingServer(FakeScriptedEngine(), info, WyomingConfig(port=0))
    await server.start()
    try:
        async with AsyncTcpClient("127.0.0.1", server.port, connect_timeout=2, read_timeout=20) as peer:
            await peer.write_event(AudioChunk(rate=16000, width=2, channels=1, audio=bytes(32000)).event())
            await peer.write_event(AudioStop().event())
            events: list[dict[str, Any]] = []
            while (event := await peer.read_event()) is not None and event.type != "transcript-stop":
                events.append({"type": event.type, **event.data})
            return events
    finally:
        await server.shutdown()


def test_both_dialects_join_utterances_with_a_space_and_ride_out_a_recovered_engine_error() -> None:
    realtime = asyncio.run(over_realtime())
    assert [event["type"] for event in realtime] == [
        "transcription.delta",
        "transcription.provisional",
        "transcription.delta",
        "transcription.done",
    ]
    assert [event.get("delta") for event in realtime[::2]] == ["Turn left.", " Then stop."]
    assert realtime[1]["text"] == " Then"  # provisional text after a boundary is spaced like the delta to come
    assert realtime[-1]["text"] == HEARD

    wyoming = asyncio.run(over_wyoming())
    assert [event["type"] for event in wyoming] == [
        "transcript-start",
        "transcript-chunk",
        "transcript-chunk",
        "transcript",
    ]
    assert [event["text"] for event in wyoming[1:3]] == ["Turn left.", " Then stop."]
    assert wyoming[-1]["text"] == HEARD
