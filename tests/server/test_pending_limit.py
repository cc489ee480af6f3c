"""The audio a ``/v1/realtime`` session may hold before a generation takes it is the server's
setting (``ServerConfig.max_pending_audio``): a real server, a real WebSocket client."""

from __future__ import annotations

import asyncio
import json

import numpy as np
from websockets.asyncio.client import connect

from voxdesk.engine.session import SAMPLE_RATE
from voxdesk.engine.testing import FakeTickEngine
from voxdesk.engine.wire.pcm import encode_audio
from voxdesk.engine.wire.realtime.events import InputAudioBufferAppend
from voxdesk.server.realtime.server import ServerConfig, running_server

HALF_SECOND = InputAudioBufferAppend(audio=encode_audio(np.full(SAMPLE_RATE // 2, 0.25, np.float32))).to_json()


def test_audio_waiting_for_a_commit_is_refused_past_the_configured_limit() -> None:
    async def scenario() -> list[dict[str, str]]:
        config = ServerConfig(port=0, max_pending_audio=1.0)
        async with (
            running_server(FakeTickEngine(), config) as server,  # a FAKE engine: no generation runs here
            connect(f"ws://127.0.0.1:{server.port}/v1/realtime") as socket,
        ):
            assert json.loads(await socket.recv())["type"] == "session.created"
            for _ in range(3):  # 1.5 s before any commit: the third half second is past the limit
                await socket.send(HALF_SECOND)
            async with asyncio.timeout(10):
                return [json.loads(await socket.recv())]

    (error,) = asyncio.run(scenario())
    assert error["type"] == "error" and error["code"] == "buffer_full", error
    assert error["error"] == "More than 1 s of audio waiting for a commit; chunk dropped"
