"""``/health`` means ready, on a real ``voxdesk serve`` process: 503 while the engine loads,
200 when sessions are taken, 503 again while SIGTERM drains, and the drain lets a running
utterance finish whole."""

from __future__ import annotations

import asyncio
import json
import signal
import time
import urllib.error
import urllib.request

import numpy as np
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import InvalidStatus

from tests.recognition import assert_recognized
from tests.serve_process import LOADING, start_serve
from tests.speech_fixtures import Fixture
from voxdesk.engine.remote.realtime import encode_audio

pytestmark = pytest.mark.integration  # runs voxdesk serve as a process


def health(port: int) -> int:
    """The status ``GET /health`` answers."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return error.code


def handshake_status(port: int) -> int | None:
    """The HTTP status a ``/v1/realtime`` handshake is refused with, ``None`` when it upgrades."""

    async def attempt() -> int | None:
        try:
            async with connect(f"ws://127.0.0.1:{port}/v1/realtime"):
                return None
        except InvalidStatus as refused:
            return int(refused.response.status_code)

    return asyncio.run(attempt())


def test_health_is_503_while_the_engine_loads_then_200() -> None:
    process, port = start_serve(until=LOADING, drain=True)
    try:
        loading = health(port)
        refused = handshake_status(port)
        statuses = [loading]
        deadline = time.monotonic() + 60
        while statuses[-1] != 200 and time.monotonic() < deadline:
            time.sleep(0.05)
            statuses.append(health(port))
        assert loading == 503, statuses
        assert refused == 503
        assert statuses[-1] == 200, statuses
        assert set(statuses) == {503, 200}
        assert handshake_status(port) is None
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/live", timeout=5) as response:
            assert response.status == 200
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0


async def _open_generation(port: int) -> ClientConnection:
    socket = await connect(f"ws://127.0.0.1:{port}/v1/realtime")
    await socket.recv()  # session.created
    await socket.send(json.dumps({"type": "session.update", "model": "voxdesk-builtin"}))
    await socket.send(json.dumps({"type": "input_audio_buffer.commit"}))
    return socket


async def _send(socket: ClientConnection, audio: np.ndarray, pace: float) -> None:
    for start in range(0, len(audio), 1600):
        chunk = encode_audio(audio[start : start + 1600])
        await socket.send(json.dumps({"type": "input_audio_buffer.append", "audio": chunk}))
        await asyncio.sleep(pace)


def test_sigterm_drains_health_503_no_new_sessions_running_utterance_finishes(
    speech: dict[str, Fixture], fixture_audio: dict[str, np.ndarray]
) -> None:
    process, port = start_serve("--drain-timeout", "60", drain=True)
    name = "command13-slt"
    audio = fixture_audio[name]
    half = len(audio) // 2

    async def scenario() -> tuple[str, list[int], int | None, int | None]:
        socket = await _open_generation(port)
        await _send(socket, audio[:half], 0.02)
        process.send_signal(signal.SIGTERM)
        await asyncio.sleep(0.5)
        statuses = [await asyncio.to_thread(health, port)]
        refused = await asyncio.to_thread(handshake_status, port)
        await _send(socket, audio[half:], 0.02)  # the client ends its utterance when it likes
        statuses.append(await asyncio.to_thread(health, port))
        await socket.send(json.dumps({"type": "input_audio_buffer.commit", "final": True}))
        text = ""
        async for frame in socket:
            event = json.loads(frame)
            assert event["type"] != "error", event  # no server_shutdown: nothing was cut
            if event["type"] == "transcription.done":
                text = event["text"]
        return text, statuses, refused, socket.close_code

    try:
        text, statuses, refused, close_code = asyncio.run(scenario())
        assert process.wait(timeout=30) == 0
    finally:
        process.kill()
    assert statuses == [503, 503]
    assert refused == 503
    assert_recognized(speech[name], text)
    assert close_code == 1001
