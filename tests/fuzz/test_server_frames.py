"""Fuzzed frames through real sockets to the ``voxdesk serve`` servers (in-process, loopback,
FakeTickEngine: the test is about the server): ``VOXDESK_FUZZ_CONNECTIONS`` connections per
dialect (20 in ``make test``, 500 in ``make soak``), each sending a run of frames from
:mod:`tests.fuzz.frames` and then a request every dialect answers, which must still be
answered on the same connection. Afterwards: nothing crashed, nothing leaked, and a fresh
session gets its text."""

from __future__ import annotations

import asyncio
import json
import random

import pytest
from websockets.asyncio.client import ClientConnection, connect

from tests.fuzz import frames
from tests.fuzz.cores import OpenAIDriver, VllmDriver, WyomingDriver
from tests.fuzz.counts import SEED, SERVER_CONNECTIONS
from tests.fuzz.rig import (
    OPENAI_PATH,
    VLLM_PATH,
    CrashWatch,
    LeakWatch,
    RawSocket,
    openai_session,
    running,
    vllm_session,
    wyoming_session,
)
from voxdesk.engine.testing import FakeTickEngine
from voxdesk.engine.wire.wyoming.framing import Event, EventReader, encode_event

CONCURRENT = 10
TICKS = "tick " * 12


async def _vllm_connection(port: int, rng: random.Random, probe: str) -> None:
    async with _connect(f"ws://127.0.0.1:{port}{VLLM_PATH}") as socket:
        for _ in range(rng.randint(1, 30)):
            await socket.send(frames.vllm_frame(rng)[1])
        # vLLM's dialect answers an unknown model with an error naming it, whatever state the connection is in.
        await socket.send(json.dumps({"type": "session.update", "model": probe}))
        await _until(socket, VllmDriver.server_types, lambda e: probe in str(e.get("error")))


async def _openai_connection(port: int, rng: random.Random, probe: str) -> None:
    async with _connect(f"ws://127.0.0.1:{port}{OPENAI_PATH}") as socket:
        for _ in range(rng.randint(1, 30)):
            await socket.send(frames.openai_frame(rng)[1])
        await socket.send(json.dumps({"type": "session.update", "event_id": probe, "session": []}))
        await _until(socket, OpenAIDriver.server_types, lambda e: e.get("error", {}).get("event_id") == probe)


def _connect(url: str) -> connect:
    """A client that takes any frame size and answers a close however much it left unread."""
    return connect(url, max_size=None, max_queue=None)


async def _until(socket: ClientConnection, allowed: frozenset[str], answered: object) -> None:
    """Read events (each of a type the dialect sends) until the probe's answer."""
    assert callable(answered)
    async with asyncio.timeout(30):
        while True:
            event = json.loads(await socket.recv())
            assert event["type"] in allowed, event
            if event["type"] == "error" and answered(event):
                return


async def _wyoming_connection(port: int, rng: random.Random, probe: str) -> None:
    raw = await RawSocket.open(port)
    try:
        await raw.send(b"".join(frames.wyoming_event(rng)[1] for _ in range(rng.randint(1, 30))))
        await raw.send(encode_event(Event("ping", {"text": probe})))
        reader = EventReader()
        async with asyncio.timeout(30):
            while not any(e.type == "pong" and e.data.get("text") == probe for e in _checked(reader)):
                data = await raw.reader.read(65_536)
                assert data, "the server closed a connection that sent only well-framed events"
                reader.receive_data(data)
        if rng.random() < 0.5:  # then bytes that break the framing: the server must close the connection
            await raw.send(frames.wyoming_broken(rng)[1])
            raw.writer.write_eof()
            async with asyncio.timeout(30):
                while await raw.reader.read(65_536):
                    pass
    finally:
        raw.vanish(reset=False)


def _checked(reader: EventReader) -> list[Event]:
    events = reader.events()
    for event in events:
        assert event.type in WyomingDriver.server_types, event
    return events


CONNECTIONS = {"vllm": _vllm_connection, "openai": _openai_connection, "wyoming": _wyoming_connection}


@pytest.mark.parametrize("dialect", list(CONNECTIONS))
def test_fuzzed_frames_never_stop_the_server_answering(dialect: str) -> None:
    async def scenario() -> tuple[list[str], str]:
        watch = CrashWatch()
        with watch.watching():
            async with running(dialect, FakeTickEngine()) as server:
                leaks = LeakWatch()
                leaks.baseline()
                for start in range(0, SERVER_CONNECTIONS, CONCURRENT):
                    numbers = range(start, min(start + CONCURRENT, SERVER_CONNECTIONS))
                    await asyncio.gather(
                        *(
                            CONNECTIONS[dialect](
                                server.port, random.Random(f"{SEED}:server:{dialect}:{n}"), f"probe-{n}"
                            )
                            for n in numbers
                        )
                    )
                await leaks.settled(server)
                if dialect == "wyoming":
                    text = await wyoming_session(server.port)
                elif dialect == "openai":
                    text = await openai_session(f"ws://127.0.0.1:{server.port}{OPENAI_PATH}")
                else:
                    text = await vllm_session(f"ws://127.0.0.1:{server.port}{VLLM_PATH}")
                await leaks.settled(server)
        return watch.crashes, text

    crashes, text = asyncio.run(scenario())
    print(f"\n{dialect}: {SERVER_CONNECTIONS} connections of fuzzed frames, {len(crashes)} crashes, then {text!r}")
    assert not crashes, "\n".join(crashes[:5])
    assert text == TICKS
