"""The server under load, bounded in count and time, on loopback only (its abuse, fuzzed
frames and abrupt disconnects, is in ``tests/fuzz``).

The many-session test uses FakeTickEngine (no recognition, one delta per 80 ms): it is about
the server carrying sessions, which Whisper on two cores could not feed.
"""

from __future__ import annotations

import asyncio
import json

import numpy as np
from websockets.asyncio.client import ClientConnection, connect

from tests.fuzz.rig import LeakWatch
from voxdesk.engine.remote.realtime import encode_audio
from voxdesk.engine.testing import TICK_SAMPLES, FakeTickEngine
from voxdesk.server.realtime.server import ServerConfig, running_server

CHUNK = 1600  # 100 ms


async def receive(socket: ClientConnection, timeout: float = 10.0) -> dict[str, object]:
    event: dict[str, object] = json.loads(await asyncio.wait_for(socket.recv(), timeout))
    return event


async def stream_one(port: int, seconds: float) -> tuple[str, str]:
    """One client streaming ``seconds`` of audio at real-time pace; returns (deltas, done text)."""
    async with connect(f"ws://127.0.0.1:{port}/v1/realtime") as socket:
        await receive(socket)
        await socket.send(json.dumps({"type": "session.update", "model": "voxdesk-builtin"}))
        await socket.send(json.dumps({"type": "input_audio_buffer.commit"}))
        chunk = encode_audio(np.full(CHUNK, 0.1, np.float32))
        loop = asyncio.get_running_loop()
        start = loop.time()
        for index in range(int(seconds * 10)):
            await asyncio.sleep(max(0.0, start + index * 0.1 - loop.time()))
            await socket.send(json.dumps({"type": "input_audio_buffer.append", "audio": chunk}))
        await socket.send(json.dumps({"type": "input_audio_buffer.commit", "final": True}))
        deltas = ""
        while (event := await receive(socket))["type"] != "transcription.done":
            assert event["type"] == "transcription.delta", event
            deltas += str(event["delta"])
        return deltas, str(event["text"])


def test_fifty_concurrent_sessions_streaming_at_real_time() -> None:
    seconds = 3.0

    async def scenario() -> list[tuple[str, str]]:
        async with running_server(FakeTickEngine(), ServerConfig(port=0, max_sessions=50)) as server:
            leaks = LeakWatch()
            leaks.baseline()
            results = await asyncio.wait_for(
                asyncio.gather(*(stream_one(server.port, seconds) for _ in range(50))), timeout=60
            )
            await leaks.settled(server)
            return results

    results = asyncio.run(scenario())
    expected_ticks = int(seconds * 16_000) // TICK_SAMPLES
    assert len(results) == 50
    for deltas, text in results:
        assert deltas == text == "tick " * expected_ticks
