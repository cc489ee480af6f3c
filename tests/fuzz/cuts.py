"""Abrupt disconnects, one coroutine per moment a client can vanish: mid-handshake, mid-append,
mid-commit, while deltas flush, mid-TLS-handshake. Each opens a real socket to the server,
goes as far as its moment (at a random byte where the moment has bytes), and drops the
connection with no goodbye: a TCP reset or a bare FIN, at random."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import ssl
from collections.abc import Awaitable, Callable

import numpy as np
from websockets.client import ClientProtocol
from websockets.frames import Frame
from websockets.uri import parse_uri

from tests.fuzz.rig import (
    OPENAI_PATH,
    OPENAI_RATE,
    TONE,
    VLLM_PATH,
    WYOMING_FORMAT,
    RawSocket,
    append_json,
    pcm,
    pieces,
    websocket_handshake,
    wyoming_chunk,
    wyoming_request,
)
from voxdesk.engine.session import SAMPLE_RATE
from voxdesk.engine.wire.wyoming.framing import Event, EventReader, encode_event

__all__ = ["CUTS", "Client", "Cut", "run_cut"]


class Client:
    """The sockets one cut opens, and its random choices; every socket vanishes when the cut
    ends, however it ends (a TCP reset or a bare FIN, at random)."""

    def __init__(self, rng: random.Random, audio: np.ndarray) -> None:
        self.rng = rng
        self.audio = audio
        """What it sends, 16 kHz: a steady level for FakeTickEngine, speech for the built-in engine."""
        self._sockets: list[RawSocket] = []

    def pcm(self, rate: int, seconds: float) -> bytes:
        """``seconds`` of its audio as PCM16 at ``rate`` Hz (from the start, looped)."""
        return pcm(self.audio, rate, seconds)

    async def open(self, port: int, tls: ssl.SSLContext | None = None) -> RawSocket:
        """A connection to ``127.0.0.1:port``."""
        raw = await RawSocket.open(port, tls)
        self._sockets.append(raw)
        return raw

    def vanish(self) -> None:
        """Drop every connection with no goodbye."""
        for raw in self._sockets:
            raw.vanish(self.rng.random() < 0.5)


Cut = Callable[[Client, int, ssl.SSLContext | None], Awaitable[None]]
"""``cut(client, port, tls)``: one connection, taken to its moment (``tls``: the TLS cut's client context)."""


async def run_cut(cut: Cut, port: int, rng: random.Random, tls: ssl.SSLContext, audio: np.ndarray = TONE) -> None:
    """``cut`` on a fresh client sending ``audio``, which vanishes at the end."""
    client = Client(rng, audio)
    try:
        await cut(client, port, tls)
    finally:
        client.vanish()


_WAIT_SECONDS = 60.0  # for the answer a cut waits for before it vanishes (Whisper on a loaded machine is slow)


def _rate(dialect: str) -> int:
    return OPENAI_RATE if dialect == "openai" else SAMPLE_RATE


def _appends(client: Client, dialect: str, least: int) -> list[bytes]:
    """Between ``least`` and 5 appends of 10 to 250 ms of the client's audio."""
    rng = client.rng
    count = rng.randint(least, 5)
    return [append_json(client.pcm(_rate(dialect), rng.choice([0.01, 0.1, 0.25]))).encode() for _ in range(count)]


def _opening(dialect: str) -> list[bytes]:
    """What a client sends before its audio: vLLM validates the model and starts a generation."""
    if dialect == "openai":
        return []
    return [b'{"type": "session.update", "model": "voxdesk-builtin"}', b'{"type": "input_audio_buffer.commit"}']


def _commit(dialect: str) -> bytes:
    return (
        b'{"type": "input_audio_buffer.commit"}'
        if dialect == "openai"
        else b'{"type": "input_audio_buffer.commit", "final": true}'
    )


def _path(dialect: str) -> str:
    return OPENAI_PATH if dialect == "openai" else VLLM_PATH


_PROBE = b'{"type": "fuzz.probe"}'  # an unknown event: both dialects answer it with an error


async def _send_frames(raw: RawSocket, protocol: ClientProtocol, texts: list[bytes], *, probe: bool = True) -> None:
    """Send ``texts``; with ``probe``, wait until the server has handled them (it answered a probe after them)."""
    for text in [*texts, _PROBE] if probe else texts:
        protocol.send_text(text)
    for data in protocol.data_to_send():
        await raw.send(data)
    if probe:
        await _until_frame(raw, protocol, "error")


def _framed(protocol: ClientProtocol, text: bytes) -> bytes:
    protocol.send_text(text)
    return b"".join(protocol.data_to_send())


async def _until_frame(raw: RawSocket, protocol: ClientProtocol, *wanted: str) -> None:
    """Read until the server sends a text frame of one of the ``wanted`` types."""
    async with _timeout():
        while True:
            data = await raw.reader.read(65_536)
            if not data:
                raise AssertionError(f"the server closed before sending {wanted}")
            protocol.receive_data(data)
            for frame in protocol.events_received():
                if isinstance(frame, Frame) and json.loads(bytes(frame.data)).get("type") in wanted:
                    return


def _timeout() -> asyncio.Timeout:
    return asyncio.timeout(_WAIT_SECONDS)


# /v1/realtime, both dialects


def _mid_handshake(dialect: str) -> Cut:
    async def cut(client: Client, port: int, tls: ssl.SSLContext | None) -> None:
        rng = client.rng
        raw = await client.open(port)
        protocol = ClientProtocol(parse_uri(f"ws://127.0.0.1{_path(dialect)}"))
        protocol.send_request(protocol.connect())
        request = b"".join(protocol.data_to_send())
        at = rng.randint(0, len(request))
        await raw.send(request[:at])
        if at == len(request) and rng.random() < 0.5:
            async with _timeout():
                await raw.reader.read(rng.randint(1, 64))  # the server is answering the upgrade

    return cut


def _mid_append(dialect: str) -> Cut:
    async def cut(client: Client, port: int, tls: ssl.SSLContext | None) -> None:
        rng = client.rng
        raw = await client.open(port)
        protocol = await websocket_handshake(raw, _path(dialect))
        await _send_frames(raw, protocol, _opening(dialect) + _appends(client, dialect, 0))
        frame = _framed(protocol, _appends(client, dialect, 1)[0])
        await raw.send(frame[: rng.randrange(1, len(frame))])

    return cut


def _mid_commit(dialect: str) -> Cut:
    async def cut(client: Client, port: int, tls: ssl.SSLContext | None) -> None:
        rng = client.rng
        raw = await client.open(port)
        protocol = await websocket_handshake(raw, _path(dialect))
        await _send_frames(raw, protocol, _opening(dialect) + _appends(client, dialect, 1))
        frame = _framed(protocol, _commit(dialect))
        await raw.send(frame[: rng.randint(1, len(frame))])  # all of it, or a part

    return cut


def _while_deltas_flush(dialect: str) -> Cut:
    async def cut(client: Client, port: int, tls: ssl.SSLContext | None) -> None:
        rng = client.rng
        raw = await client.open(port)
        protocol = await websocket_handshake(raw, _path(dialect))
        audio = pieces(client.pcm(_rate(dialect), rng.uniform(1.0, 4.0)), _rate(dialect))  # 1 to 4 s at once
        # Then the commit: OpenAI sends the text once a turn is committed, vLLM's final commit
        # makes the built-in engine say what it heard so far.
        texts = [*_opening(dialect), *(append_json(piece).encode() for piece in audio), _commit(dialect)]
        await _send_frames(raw, protocol, texts, probe=False)
        wanted = (
            ("input_audio_buffer.committed",) if dialect == "openai" else ("transcription.delta", "transcription.done")
        )
        await _until_frame(raw, protocol, *wanted)

    return cut


def _mid_tls_handshake(dialect: str) -> Cut:
    async def cut(client: Client, port: int, tls: ssl.SSLContext | None) -> None:
        rng = client.rng
        assert tls is not None, "the TLS cut needs the TLS server and its client context"
        moment = rng.random()
        if moment < 0.7:  # inside the TLS handshake: part of the ClientHello, or all of it and part of the answer
            raw = await client.open(port)
            incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
            hello_only = tls.wrap_bio(incoming, outgoing, server_hostname="localhost")
            with contextlib.suppress(ssl.SSLWantReadError):
                hello_only.do_handshake()
            hello = outgoing.read()
            if moment < 0.4:
                await raw.send(hello[: rng.randrange(1, len(hello))])
            else:
                await raw.send(hello)
                async with _timeout():
                    await raw.reader.read(rng.randint(1, 512))  # the ServerHello is on its way
        else:  # TLS done, then gone in the middle of the WebSocket upgrade
            raw = await client.open(port, tls)
            protocol = ClientProtocol(parse_uri(f"wss://localhost{_path(dialect)}"))
            protocol.send_request(protocol.connect())
            request = b"".join(protocol.data_to_send())
            await raw.send(request[: rng.randint(0, len(request))])

    return cut


# Wyoming


def _start_and_chunks(client: Client, least: int) -> bytes:
    """``audio-start`` and between ``least`` and 5 chunks of 10 to 250 ms of the client's audio."""
    rng = client.rng
    chunks = [_chunk(client) for _ in range(rng.randint(least, 5))]
    return encode_event(Event("audio-start", WYOMING_FORMAT)) + b"".join(chunks)


def _chunk(client: Client) -> bytes:
    return wyoming_chunk(client.pcm(SAMPLE_RATE, client.rng.choice([0.01, 0.1, 0.25])))


async def _wyoming_mid_handshake(client: Client, port: int, tls: ssl.SSLContext | None) -> None:
    """Wyoming has no handshake; its first exchange is ``describe`` and ``info``."""
    rng = client.rng
    raw = await client.open(port)
    describe = encode_event(Event("describe"))
    at = rng.randint(0, len(describe))
    await raw.send(describe[:at])
    if at == len(describe) and rng.random() < 0.5:
        async with _timeout():
            await raw.reader.read(rng.randint(1, 64))  # the info is on its way


async def _wyoming_send(raw: RawSocket, data: bytes) -> None:
    """Send ``data``, then wait until the server has handled it (it answered a ``ping`` after it)."""
    await raw.send(data + encode_event(Event("ping", {"text": "probe"})))
    reader = EventReader()
    async with _timeout():
        while not any(event.type == "pong" for event in reader.events()):
            received = await raw.reader.read(65_536)
            if not received:
                raise AssertionError("the server closed before answering the ping")
            reader.receive_data(received)


async def _wyoming_mid_append(client: Client, port: int, tls: ssl.SSLContext | None) -> None:
    rng = client.rng
    raw = await client.open(port)
    await _wyoming_send(raw, _start_and_chunks(client, 0))
    chunk = _chunk(client)
    await raw.send(chunk[: rng.randrange(1, len(chunk))])


async def _wyoming_mid_commit(client: Client, port: int, tls: ssl.SSLContext | None) -> None:
    """``audio-stop`` is Wyoming's commit: the transcript is being made when the client goes."""
    rng = client.rng
    raw = await client.open(port)
    await _wyoming_send(raw, _start_and_chunks(client, 1))
    stop = encode_event(Event("audio-stop"))
    await raw.send(stop[: rng.randint(1, len(stop))])


async def _wyoming_while_deltas_flush(client: Client, port: int, tls: ssl.SSLContext | None) -> None:
    rng = client.rng
    raw = await client.open(port)
    await raw.send(wyoming_request(client.audio, rng.uniform(1.0, 4.0)))
    reader = EventReader()
    async with _timeout():  # the first text (a chunk, or the transcript where no text came before it)
        while not any(event.type in ("transcript-chunk", "transcript") for event in reader.events()):
            data = await raw.reader.read(65_536)
            if not data:
                raise AssertionError("the server closed before sending its text")
            reader.receive_data(data)


CUTS: dict[str, dict[str, Cut]] = {
    **{
        dialect: {
            "mid-handshake": _mid_handshake(dialect),
            "mid-append": _mid_append(dialect),
            "mid-commit": _mid_commit(dialect),
            "while deltas flush": _while_deltas_flush(dialect),
            "mid-TLS-handshake": _mid_tls_handshake(dialect),
        }
        for dialect in ("vllm", "openai")
    },
    "wyoming": {
        "mid-handshake": _wyoming_mid_handshake,
        "mid-append": _wyoming_mid_append,
        "mid-commit": _wyoming_mid_commit,
        "while deltas flush": _wyoming_while_deltas_flush,
    },
}
"""Each dialect's cuts by moment (Wyoming has no TLS: its servers speak plain TCP)."""
