"""How far a stream goes on over servers that fail it: a real Voxdesk server (a FAKE ticking
engine behind it: the tests are about the failover, not the words) behind real loopback
proxies that cut connections or stop passing answers.

Text on a connection that is then lost is no progress: a server that always sends some text
and then drops the connection gets a bounded number of tries, with waits between rounds over
the servers, and the stream ends with one fatal error. A stream gives up for silence only once
every server went silent, not when one went silent twice."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

import numpy as np
import pytest

from tests.engine.silencing_proxy import Silence, SilencingProxy
from tests.tcp_proxy import CuttableProxy
from voxdesk.engine.events import (
    EngineEvent,
    ProvisionalText,
    StreamError,
    StreamErrorCode,
    TextDelta,
    TextRetracted,
    UtteranceDone,
)
from voxdesk.engine.remote.realtime import VllmRealtimeEngine, VllmRealtimeSettings
from voxdesk.engine.remote.session import ClientEngine
from voxdesk.engine.remote.wyoming import WyomingEngine, WyomingSettings
from voxdesk.engine.testing import FakeTickEngine
from voxdesk.engine.wire.wyoming.info import AsrModel, ServiceInfo
from voxdesk.server.realtime.server import ServerConfig, running_server
from voxdesk.server.wyoming.config import WyomingConfig
from voxdesk.server.wyoming.server import WyomingServer

RETRIES = 2  # failed rounds over both servers before the stream gives up
CONNECTIONS = RETRIES * 2 + 1  # the first try, then RETRIES rounds over both servers
RUNAWAY = 50  # connections past which the stream is retrying without end
BOUND = 10.0  # how long giving up may take, the two waits between rounds included
INFO = ServiceInfo(AsrModel("fake", ("en",)), "0", {"name": "test", "url": ""}).to_event()


@contextlib.asynccontextmanager
async def served(dialect: str) -> AsyncIterator[int]:
    """A real Voxdesk server of ``dialect`` on a FAKE ticking engine; its port."""
    if dialect == "wyoming":
        server = WyomingServer(FakeTickEngine(), INFO, WyomingConfig(port=0))
        await server.start()
        try:
            yield server.port
        finally:
            await server.shutdown()
    else:
        async with running_server(FakeTickEngine(), ServerConfig(port=0)) as realtime:
            yield realtime.port


def client(dialect: str, ports: list[int]) -> ClientEngine[Any]:
    if dialect == "wyoming":
        urls = ",".join(f"tcp://127.0.0.1:{port}" for port in ports)
        return WyomingEngine(WyomingSettings(url=urls, max_retries=RETRIES))
    urls = ",".join(f"ws://127.0.0.1:{port}" for port in ports)
    return VllmRealtimeEngine(VllmRealtimeSettings(url=urls, max_retries=RETRIES))


async def speaking() -> AsyncIterator[np.ndarray]:
    """Half a second of audio, then a speaker who goes on talking (the audio never ends), so
    no server can finish the utterance: each connection only ever shows text."""
    yield np.full(8000, 0.25, np.float32)
    await asyncio.Event().wait()


def shown(seen: list[tuple[float, EngineEvent]]) -> list[float]:
    """When each connection first showed text."""
    times, showing = [], False
    for at, event in seen:
        if isinstance(event, StreamError):
            showing = False
        elif isinstance(event, TextDelta | ProvisionalText) and not showing:
            times.append(at)
            showing = True
    return times


@pytest.mark.parametrize("dialect", ["vllm", "wyoming"])
def test_a_server_that_drops_every_connection_after_some_text_is_given_up_after_bounded_tries(dialect: str) -> None:
    async def scenario() -> tuple[list[tuple[float, EngineEvent]], list[str]]:
        async with served(dialect) as port, CuttableProxy(port) as first, CuttableProxy(port) as second:
            engine = client(dialect, [first.port, second.port])
            await engine.load()
            seen: list[tuple[float, EngineEvent]] = []
            cut = False  # this connection's
            async with asyncio.timeout(BOUND):
                async for event in engine.stream(speaking()):
                    seen.append((time.monotonic(), event))
                    if isinstance(event, StreamError):
                        cut = False  # a new connection follows
                    elif isinstance(event, TextDelta | ProvisionalText) and not cut:
                        first.cut()  # the server's first text came through: it drops the connection
                        second.cut()
                        cut = True
                        assert len(shown(seen)) <= RUNAWAY, "retrying without end"
            return seen, engine.servers.urls

    seen, urls = asyncio.run(scenario())
    events = [event for _, event in seen]
    *tries, last = events
    assert isinstance(last, StreamError) and last.fatal and last.code == StreamErrorCode.CONNECTION_LOST
    assert last.message.startswith(f"gave up reconnecting to {', '.join(urls)} after")
    assert f" after {CONNECTIONS} lost connections: " in last.message, last.message
    starts = shown(seen)
    assert len(starts) == CONNECTIONS, "one connection per try, each showed text"
    losses = [(at, e) for at, e in seen if isinstance(e, StreamError) and not e.fatal]
    assert len(losses) == CONNECTIONS - 1 and sum(isinstance(e, TextRetracted) for e in tries) == CONNECTIONS - 1
    # After each round over both servers the stream waits (backoff: 0.5 s, then 1 s, ±20 %).
    for round_end, least in ((1, 0.4), (3, 0.8)):
        lost_at = losses[round_end][0]
        assert starts[round_end + 1] - lost_at >= least, f"no wait after round {round_end // 2 + 1}"


def test_a_server_gone_silent_twice_while_another_only_dropped_the_connection_does_not_end_the_stream() -> None:
    """Servers A and B: A silent, B drops the connection after its first text, A silent again,
    then B answers. Only A went silent, so the stream goes on to B and ends with its text."""
    timeout = 0.5

    async def scenario() -> tuple[list[EngineEvent], list[str]]:
        async with (
            served("vllm") as port,
            SilencingProxy(port) as silent,
            CuttableProxy(port) as dropping,
        ):
            engine = VllmRealtimeEngine(
                VllmRealtimeSettings(
                    url=f"ws://127.0.0.1:{silent.port},ws://127.0.0.1:{dropping.port}",
                    open_timeout=timeout,
                    read_timeout=timeout,
                )
            )
            await engine.load()  # on A, which answered then
            silent.silence = Silence.ALL
            go_on, events = asyncio.Event(), []

            async def audio() -> AsyncIterator[np.ndarray]:
                yield np.full(8000, 0.25, np.float32)
                await go_on.wait()  # the rest only once B dropped its first connection
                yield np.full(8000, 0.25, np.float32)

            async with asyncio.timeout(BOUND):
                async for event in engine.stream(audio()):
                    events.append(event)
                    if isinstance(event, TextDelta) and not go_on.is_set():  # only B answers
                        dropping.cut()
                        go_on.set()
            return events, engine.servers.urls

    events, (a, b) = asyncio.run(scenario())
    errors = [e for e in events if isinstance(e, StreamError)]
    assert [e.fatal for e in errors] == [False, False, False], [e.message for e in errors]
    went_silent, dropped, silent_again = (e.message for e in errors)
    assert went_silent.startswith(f"speech server {a} lost (it did not answer") and f"going on with {b}" in went_silent
    assert dropped.startswith(f"speech server {b} lost") and silent_again.startswith(f"speech server {a} lost")
    assert isinstance(events[-1], UtteranceDone) and events[-1].text.count("tick") == 12, events[-1]
