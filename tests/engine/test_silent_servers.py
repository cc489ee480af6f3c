"""A server that takes the connection and never answers, for each client dialect: a real
Voxdesk server (a FAKE ticking engine behind it: the test is about the wire, not the words)
behind a real loopback proxy that stops passing its answers (:mod:`tests.engine.silencing_proxy`).

The client notices within its time limits and says so in one sentence naming the server; a
silent server is left for the next one, and is not retried round after round."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

import numpy as np
import pytest

from tests.engine.silencing_proxy import Silence, SilencingProxy
from voxdesk.engine.errors import EngineUnavailable
from voxdesk.engine.events import (
    EngineEvent,
    EngineFault,
    ProvisionalText,
    StreamError,
    StreamErrorCode,
    TextDelta,
    UtteranceDone,
)
from voxdesk.engine.remote.openai import OpenAIRealtimeEngine, OpenAISettings
from voxdesk.engine.remote.realtime import VllmRealtimeEngine, VllmRealtimeSettings
from voxdesk.engine.remote.session import ClientEngine
from voxdesk.engine.remote.wyoming import WyomingEngine, WyomingSettings
from voxdesk.engine.testing import TICK_SAMPLES, FakeTickEngine
from voxdesk.engine.wire.wyoming.info import AsrModel, ServiceInfo
from voxdesk.server.realtime.server import ServerConfig, running_server
from voxdesk.server.wyoming.config import WyomingConfig
from voxdesk.server.wyoming.server import WyomingServer

TIMEOUT = 0.5  # every time limit of the clients here
BOUND = 5 * TIMEOUT  # how long noticing a silent server may take, all told
GUARD = 30.0  # only for a broken client that waits for ever
INFO = ServiceInfo(AsrModel("fake", ("en",)), "0", {"name": "test", "url": ""}).to_event()
CHUNKS, CHUNK = 10, 1600  # one second of audio
KINDS = {"vllm": "speech server", "openai": "OpenAI Realtime server", "wyoming": "Wyoming server"}
HANDSHAKE = f"it did not answer the WebSocket handshake within {TIMEOUT:g} s"
NOTHING = f"it sent nothing within {TIMEOUT:g} s of connecting"
NO_FINAL = f"it sent nothing for {TIMEOUT:g} s while its final transcript was due"

# dialect, what the proxy withholds, what the client says it left unanswered at load and in a stream
SILENCES = [
    pytest.param("vllm", Silence.ALL, HANDSHAKE, HANDSHAKE, id="vllm-handshake"),
    pytest.param("vllm", Silence.AFTER_HANDSHAKE, NOTHING, NOTHING, id="vllm-after-handshake"),
    pytest.param("openai", Silence.ALL, HANDSHAKE, HANDSHAKE, id="openai-handshake"),
    pytest.param(
        "openai", Silence.AFTER_HANDSHAKE, f"it did not confirm the session within {TIMEOUT:g} s", NO_FINAL,
        id="openai-after-handshake",
    ),
    pytest.param("wyoming", Silence.ALL, f"it did not answer describe within {TIMEOUT:g} s", NO_FINAL, id="wyoming"),
]  # fmt: skip


def client(dialect: str, ports: list[int]) -> ClientEngine[Any]:
    """A client engine of ``dialect`` over the servers at ``ports``, with the default retries."""
    if dialect == "wyoming":
        urls = ",".join(f"tcp://127.0.0.1:{port}" for port in ports)
        return WyomingEngine(WyomingSettings(url=urls, connect_timeout=TIMEOUT, read_timeout=TIMEOUT))
    urls = ",".join(f"ws://127.0.0.1:{port}" for port in ports)
    if dialect == "vllm":
        return VllmRealtimeEngine(VllmRealtimeSettings(url=urls, open_timeout=TIMEOUT, read_timeout=TIMEOUT))
    return OpenAIRealtimeEngine(OpenAISettings(url=urls, open_timeout=TIMEOUT, read_timeout=TIMEOUT))


@contextlib.asynccontextmanager
async def proxied(dialect: str, count: int = 1) -> AsyncIterator[list[SilencingProxy]]:
    """``count`` proxies in front of one real Voxdesk server of ``dialect``, all passing answers."""
    async with contextlib.AsyncExitStack() as stack:
        if dialect == "wyoming":
            wyoming = WyomingServer(FakeTickEngine(), INFO, WyomingConfig(port=0))
            await wyoming.start()
            stack.push_async_callback(wyoming.shutdown)
            port = wyoming.port
        else:
            port = (await stack.enter_async_context(running_server(FakeTickEngine(), ServerConfig(port=0)))).port
        yield [await stack.enter_async_context(SilencingProxy(port)) for _ in range(count)]


async def audio(halfway: asyncio.Event | None = None, go_on: asyncio.Event | None = None) -> AsyncIterator[np.ndarray]:
    """One second of audio; halfway through, ``halfway`` is set and the rest waits for ``go_on``."""
    for index in range(CHUNKS):
        if halfway is not None and go_on is not None and index == CHUNKS // 2:
            halfway.set()
            await go_on.wait()
        yield np.full(CHUNK, 0.25, np.float32)


class Seen:
    """A stream's events as they come, and a way to wait for one."""

    def __init__(self) -> None:
        self.events: list[EngineEvent] = []
        self._more = asyncio.Event()

    async def collect(self, stream: AsyncIterator[EngineEvent]) -> None:
        async for event in stream:
            self.events.append(event)
            self._more.set()

    async def until_text(self) -> None:
        while not any(isinstance(event, TextDelta | ProvisionalText) for event in self.events):
            self._more.clear()
            await self._more.wait()


async def timed(engine: ClientEngine[Any], feed: AsyncIterator[np.ndarray]) -> tuple[list[EngineEvent], float]:
    """The stream's events and how long it took."""
    started = time.monotonic()
    async with asyncio.timeout(GUARD):
        events = [event async for event in engine.stream(feed)]
    return events, time.monotonic() - started


def assert_stopped_answering(error: EngineEvent, dialect: str, url: str, unanswered: str) -> None:
    """One fatal error that says which server stopped answering, and that a restart may help."""
    assert isinstance(error, StreamError), error
    assert error.message == f"the {KINDS[dialect]} at {url} stopped answering: {unanswered}"
    assert error.fatal and error.code == StreamErrorCode.CONNECTION_LOST
    assert error.engine_fault == EngineFault.ENGINE and error.restart_helps


@pytest.mark.parametrize(("dialect", "silence", "at_load", "in_stream"), SILENCES)
def test_loading_from_a_server_that_never_answers_fails_in_bounded_time_naming_it(
    dialect: str, silence: Silence, at_load: str, in_stream: str
) -> None:
    async def scenario() -> tuple[str, str, float]:
        async with proxied(dialect) as (proxy,):
            proxy.silence = silence
            engine = client(dialect, [proxy.port])
            started = time.monotonic()
            with pytest.raises(EngineUnavailable) as refused:
                async with asyncio.timeout(GUARD):
                    await engine.load()
            return str(refused.value), engine.url, time.monotonic() - started

    message, url, took = asyncio.run(scenario())
    assert message == f"the {KINDS[dialect]} at {url} does not answer: {at_load}"
    assert took < BOUND


@pytest.mark.parametrize(("dialect", "silence", "at_load", "in_stream"), SILENCES)
def test_a_stream_on_a_server_gone_silent_since_it_loaded_ends_with_one_error_naming_it(
    dialect: str, silence: Silence, at_load: str, in_stream: str
) -> None:
    async def scenario() -> tuple[list[EngineEvent], float, str, int]:
        async with proxied(dialect) as (proxy,):
            engine = client(dialect, [proxy.port])
            await engine.load()  # it answered then
            proxy.silence = silence
            events, took = await timed(engine, audio())
            return events, took, engine.url, proxy.connections

    events, took, url, connections = asyncio.run(scenario())
    (error,) = events
    assert_stopped_answering(error, dialect, url, in_stream)
    assert took < BOUND
    assert connections == 2, "the load's and the stream's: a silent server is not tried round after round"


@pytest.mark.parametrize("dialect", ["vllm", "openai", "wyoming"])
def test_a_final_that_never_comes_ends_the_stream_and_the_text_shown_stays(dialect: str) -> None:
    """The server answers the stream, then goes silent halfway through its audio: for the vLLM
    and Wyoming dialects once its first text came (shown, it must stay), for OpenAI's (whose text
    comes only after the audio) before any."""

    async def scenario() -> tuple[list[EngineEvent], float, str]:
        async with proxied(dialect) as (proxy,):
            engine = client(dialect, [proxy.port])
            await engine.load()
            halfway, go_on, seen = asyncio.Event(), asyncio.Event(), Seen()
            started = time.monotonic()
            async with asyncio.timeout(GUARD):
                consumer = asyncio.ensure_future(seen.collect(engine.stream(audio(halfway, go_on))))
                await halfway.wait()
                if dialect != "openai":
                    await seen.until_text()
                proxy.silence = Silence.ALL
                go_on.set()
                await consumer
            return seen.events, time.monotonic() - started, engine.url

    events, took, url = asyncio.run(scenario())
    *text, error = events
    assert_stopped_answering(error, dialect, url, NO_FINAL)
    if dialect == "openai":
        assert text == []
    else:
        assert text and all(isinstance(e, TextDelta | ProvisionalText) and "tick" in e.text for e in text), text
    assert took < BOUND


@pytest.mark.parametrize(
    ("dialect", "silence", "unanswered"),
    [
        pytest.param("vllm", Silence.AFTER_HANDSHAKE, NOTHING, id="vllm"),
        pytest.param("openai", Silence.AFTER_HANDSHAKE, NO_FINAL, id="openai"),
        pytest.param("wyoming", Silence.ALL, NO_FINAL, id="wyoming"),
    ],
)
def test_a_silent_server_is_left_for_the_next_one_which_gives_the_whole_text(
    dialect: str, silence: Silence, unanswered: str
) -> None:
    async def scenario() -> tuple[list[EngineEvent], list[str]]:
        async with proxied(dialect, count=2) as (first, second):
            engine = client(dialect, [first.port, second.port])
            await engine.load()  # the first answered
            first.silence = silence
            events, _ = await timed(engine, audio())
            return events, engine.servers.urls

    events, (first_url, second_url) = asyncio.run(scenario())
    lost, *_, done = events
    assert isinstance(lost, StreamError) and not lost.fatal and lost.code == StreamErrorCode.CONNECTION_LOST
    assert lost.message == f"{KINDS[dialect]} {first_url} lost ({unanswered}); going on with {second_url}"
    assert isinstance(done, UtteranceDone) and done.text.split() == ["tick"] * (CHUNKS * CHUNK // TICK_SAMPLES)
    assert not [e for e in events[1:] if isinstance(e, StreamError)]
