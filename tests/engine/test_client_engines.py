"""What every client engine does alike (:mod:`voxdesk.engine.remote.session`), each dialect's
against Voxdesk's own server for it on loopback, through real sockets."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable

import numpy as np
import pytest

from voxdesk.engine.errors import AudioFormatError
from voxdesk.engine.events import EngineEvent, StreamError, UtteranceDone
from voxdesk.engine.remote.openai import OpenAIRealtimeEngine, OpenAISettings
from voxdesk.engine.remote.realtime import VllmRealtimeEngine, VllmRealtimeSettings
from voxdesk.engine.remote.wyoming import WyomingEngine, WyomingSettings
from voxdesk.engine.session import StreamingEngine
from voxdesk.engine.testing import FakeTickEngine
from voxdesk.engine.wire.wyoming.info import AsrModel, ServiceInfo
from voxdesk.server.realtime.server import ServerConfig, running_server
from voxdesk.server.wyoming.config import WyomingConfig
from voxdesk.server.wyoming.server import WyomingServer

INFO = ServiceInfo(AsrModel("fake", ("en",)), "0", {"name": "test", "url": ""}).to_event()


@contextlib.asynccontextmanager
async def serving(dialect: str) -> AsyncIterator[StreamingEngine]:
    """A client engine of ``dialect`` on a Voxdesk server with a fake engine (ticks)."""
    if dialect == "wyoming":
        server = WyomingServer(FakeTickEngine(), INFO, WyomingConfig(port=0))
        await server.start()
        try:
            yield WyomingEngine(WyomingSettings(url=f"tcp://127.0.0.1:{server.port}", max_retries=0))
        finally:
            await server.shutdown()
        return
    client: dict[str, Callable[[str], StreamingEngine]] = {
        "vllm": lambda url: VllmRealtimeEngine(VllmRealtimeSettings(url=url, max_retries=0)),
        "openai": lambda url: OpenAIRealtimeEngine(OpenAISettings(url=url, max_retries=0)),
    }
    async with running_server(FakeTickEngine(), ServerConfig(port=0)) as realtime:
        yield client[dialect](f"ws://127.0.0.1:{realtime.port}")


@pytest.mark.parametrize("dialect", ["vllm", "openai", "wyoming"])
def test_bad_audio_fails_the_stream_at_once_while_the_server_waits_for_more(dialect: str) -> None:
    async def audio() -> AsyncIterator[np.ndarray]:
        yield np.full(1600, 0.1, np.float32)
        yield np.zeros((1600, 2), np.float32)  # stereo: the session contract takes mono only

    async def scenario() -> list[EngineEvent]:
        events: list[EngineEvent] = []
        async with serving(dialect) as engine:
            await engine.load()
            with pytest.raises(AudioFormatError, match="mono"):  # noqa: PT012 - the loop is what raises
                # The server waits for the rest of the audio: only the sender's failure ends the wait.
                async with asyncio.timeout(20):
                    async for event in engine.stream(audio()):
                        events.append(event)
        return events

    events = asyncio.run(scenario())
    assert not [e for e in events if isinstance(e, StreamError | UtteranceDone)], events
