"""A broken or malicious server that sends frames a client cannot read, for each client dialect:
JSON nested past Python's parser, a lone surrogate in its text (valid JSON, not Unicode, which
no UTF-8 write downstream takes), a binary frame that is not UTF-8. Each is a real server on
loopback (a websockets server, an asyncio TCP server) that answers the client's opening as its
dialect does and then sends the bad frame.

The stream ends with one fatal error naming the server and what was wrong, not an exception
out of the engine; with another server to go to, the stream goes on there (a real Voxdesk server)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from tests.engine.test_silent_servers import CHUNK, CHUNKS, INFO, KINDS, audio, client, proxied, timed
from voxdesk.engine.events import EngineFault, StreamError, StreamErrorCode, UtteranceDone
from voxdesk.engine.testing import TICK_SAMPLES
from voxdesk.engine.wire.wyoming.framing import EventReader, encode_event

DEEP = "[" * 30_000 + "]" * 30_000  # within Wyoming's 64 KiB header line, far past the parser
NESTED = {
    "vllm": "JSON nested deeper than the parser goes",
    "openai": "JSON nested deeper than the parser goes",
    "wyoming": "header is not valid JSON",
}
SURROGATE = "a string with a lone surrogate ('\\ud800'), not Unicode"
# what each dialect's server sends as text, with a lone surrogate in it
TEXT_FRAMES = {
    "vllm": '{"type": "transcription.delta", "delta": "hello \\ud800"}',
    "openai": '{"type": "conversation.item.input_audio_transcription.delta", "item_id": "i", "delta": "hi \\ud800"}',
    "wyoming": '{"type": "transcript", "data": {"text": "hello \\ud800"}}',
}
CASES = [
    pytest.param(dialect, bad, why, id=f"{dialect}-{name}")
    for dialect in ("vllm", "openai", "wyoming")
    for name, bad, why in [("nested", DEEP, NESTED[dialect]), ("surrogate", TEXT_FRAMES[dialect], SURROGATE)]
] + [
    pytest.param(dialect, b"\xff\xfe not UTF-8", "a binary frame that is not UTF-8 (invalid start byte at byte 0)",
                 id=f"{dialect}-binary")
    for dialect in ("vllm", "openai")
]  # fmt: skip


class UnreadableServer:
    """A real loopback server of ``dialect`` that answers the client's opening, then sends
    ``bad`` on each stream's connection; :attr:`streams` counts those connections."""

    def __init__(self, dialect: str, bad: str | bytes) -> None:
        self.dialect = dialect
        self.bad = bad
        self.streams = 0

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[int]:
        """The server for the length of an ``async with``; its port."""
        if self.dialect == "wyoming":
            server = await asyncio.start_server(self._wyoming, "127.0.0.1", 0)
            async with server:
                yield server.sockets[0].getsockname()[1]
        else:
            async with serve(self._websocket, "127.0.0.1", 0) as ws:
                yield next(iter(ws.sockets)).getsockname()[1]

    async def _websocket(self, socket: ServerConnection) -> None:
        with contextlib.suppress(ConnectionClosed):
            if self.dialect == "vllm":
                await socket.send('{"type": "session.created", "id": "sess-1", "created": 0}')
                await socket.recv()  # session.update: this connection is a stream's, not the load's probe
            else:
                await socket.recv()  # session.update
                await socket.send('{"type": "session.updated", "session": {}}')
                await socket.recv()  # the load's probe closes here; a stream sends its audio
            self.streams += 1
            await socket.send(self.bad)
            async for _ in socket:  # until the client closes
                pass

    async def _wyoming(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        framing = EventReader()
        with contextlib.suppress(ConnectionError):
            while data := await reader.read(65536):
                framing.receive_data(data)
                for event in framing.events():
                    if event.type == "describe":
                        writer.write(encode_event(INFO))
                    elif event.type == "transcribe":
                        self.streams += 1
                        bad = self.bad if isinstance(self.bad, bytes) else self.bad.encode()
                        writer.write(bad + b"\n")
                await writer.drain()
        writer.close()


@pytest.mark.parametrize(("dialect", "bad", "why"), CASES)
def test_a_frame_that_cannot_be_read_ends_the_stream_with_one_error_naming_the_server(
    dialect: str, bad: str | bytes, why: str
) -> None:
    async def scenario() -> tuple[list[object], str, int]:
        server = UnreadableServer(dialect, bad)
        async with server.running() as port:
            engine = client(dialect, [port])
            await engine.load()
            events, _ = await timed(engine, audio())
            return list(events), engine.url, server.streams

    events, url, streams = asyncio.run(scenario())
    (error,) = events
    assert isinstance(error, StreamError), error
    assert error.message == f"the {KINDS[dialect]} at {url} sent a frame that cannot be read: {why}"
    assert error.fatal and error.code == StreamErrorCode.CONNECTION_LOST and error.engine_fault == EngineFault.ENGINE
    assert streams == 1, "a broken server is not retried round after round"


@pytest.mark.parametrize("dialect", ["vllm", "openai", "wyoming"])
def test_a_server_that_sent_a_frame_that_cannot_be_read_is_left_for_the_next_one(dialect: str) -> None:
    async def scenario() -> tuple[list[object], list[str]]:
        broken = UnreadableServer(dialect, DEEP)
        async with broken.running() as port, proxied(dialect) as (good,):
            engine = client(dialect, [port, good.port])
            await engine.load()  # the broken one answered its opening
            events, _ = await timed(engine, audio())
            return list(events), engine.servers.urls

    events, (first_url, second_url) = asyncio.run(scenario())
    lost, *_, done = events
    assert isinstance(lost, StreamError) and not lost.fatal and lost.code == StreamErrorCode.CONNECTION_LOST
    unreadable = f"sent a frame that cannot be read: {NESTED[dialect]}"
    assert f"{first_url} lost ({unreadable}); going on with {second_url}" in lost.message
    assert isinstance(done, UtteranceDone) and done.text.split() == ["tick"] * (CHUNKS * CHUNK // TICK_SAMPLES)
    assert not [e for e in events[1:] if isinstance(e, StreamError)]
