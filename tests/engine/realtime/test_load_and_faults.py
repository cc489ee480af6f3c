"""The server under load and abuse, bounded in count and time, on loopback only.

The many-session tests use FakeTickEngine (no recognition, one delta per 80 ms): they are
about the server carrying sessions, which Whisper on two cores could not feed.
"""

from __future__ import annotations

import asyncio
import json
import random

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from websockets.asyncio.client import ClientConnection, connect

from voxdesk.engine.remote.realtime import encode_audio
from voxdesk.engine.testing import TICK_SAMPLES, FakeTickEngine
from voxdesk.server.realtime.server import RealtimeServer, ServerConfig, running_server

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


async def wait_for_idle(server: RealtimeServer, timeout: float = 10.0) -> None:
    """Until the server holds no connection and no engine session."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        sessions = server.metrics.sessions_active._value.get()
        active = server.metrics.connections_active._value.get()
        if server.active_connections == 0 and sessions == 0 and active == 0:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"still busy: {server.active_connections} connections, {sessions} sessions, gauge {active}")


def test_fifty_concurrent_sessions_streaming_at_real_time() -> None:
    seconds = 3.0

    async def scenario() -> list[tuple[str, str]]:
        async with running_server(FakeTickEngine(), ServerConfig(port=0, max_sessions=50)) as server:
            results = await asyncio.wait_for(
                asyncio.gather(*(stream_one(server.port, seconds) for _ in range(50))), timeout=60
            )
            await wait_for_idle(server)
            return results

    results = asyncio.run(scenario())
    expected_ticks = int(seconds * 16_000) // TICK_SAMPLES
    assert len(results) == 50
    for deltas, text in results:
        assert deltas == text == "tick " * expected_ticks


def test_five_hundred_connections_cut_at_random_moments_leave_nothing_behind() -> None:
    rng = random.Random(20261129)

    async def cut_one(port: int, stage: int, delay: float) -> None:
        socket = await connect(f"ws://127.0.0.1:{port}/v1/realtime")
        chunk = encode_audio(np.full(CHUNK, 0.1, np.float32))
        steps = [
            {"type": "session.update", "model": ""},
            {"type": "input_audio_buffer.commit"},
            *[{"type": "input_audio_buffer.append", "audio": chunk}] * 5,
            {"type": "input_audio_buffer.commit", "final": True},
        ]
        for event in steps[:stage]:
            await socket.send(json.dumps(event))
        await asyncio.sleep(delay)
        socket.transport.abort()  # no close frame: the network is gone

    async def scenario() -> tuple[float, float, dict[str, object]]:
        async with running_server(FakeTickEngine(), ServerConfig(port=0, max_sessions=100)) as server:
            for _ in range(10):
                await asyncio.gather(
                    *(cut_one(server.port, rng.randint(0, 8), rng.uniform(0, 0.05)) for _ in range(50))
                )
            await wait_for_idle(server)
            async with connect(f"ws://127.0.0.1:{server.port}/v1/realtime") as socket:
                created = await receive(socket)
            return server.metrics.connections_total._value.get(), server.metrics.refused._value.get(), created

    total, refused, created = asyncio.run(scenario())
    assert total == 501 and refused == 0
    assert created["type"] == "session.created"


_known_types = st.sampled_from(
    ["session.update", "input_audio_buffer.append", "input_audio_buffer.commit", "transcription.delta", "nope"]
)
_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=8,
)
_events = st.fixed_dictionaries(
    {"type": _known_types},
    optional={"model": _json_values, "audio": st.text(max_size=40) | _json_values, "final": _json_values},
)
_frames = st.one_of(
    _events.map(json.dumps),
    st.text(max_size=60),
    st.binary(max_size=60),
    _json_values.map(json.dumps),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frames=st.lists(_frames, min_size=1, max_size=15))
def test_fuzzed_frames_never_stop_the_server_answering(frames: list[str | bytes]) -> None:
    async def scenario() -> list[dict[str, object]]:
        async with running_server(FakeTickEngine(), ServerConfig(port=0)) as server:
            async with connect(f"ws://127.0.0.1:{server.port}/v1/realtime") as socket:
                await receive(socket)
                for frame in frames:
                    await socket.send(frame)
                # The same connection must still answer a known request...
                await socket.send(json.dumps({"type": "session.update", "model": "not-served"}))
                answer = {"type": "error", "error": "The model `not-served` does not exist.", "code": "model_not_found"}
                replies = [await receive(socket)]
                while replies[-1] != answer:
                    replies.append(await receive(socket))
            await wait_for_idle(server)
            return replies

    replies = asyncio.run(scenario())
    assert replies[-1] == {
        "type": "error",
        "error": "The model `not-served` does not exist.",
        "code": "model_not_found",
    }
    assert all(r["type"] in {"error", "transcription.delta", "transcription.done"} for r in replies)
