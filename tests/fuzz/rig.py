"""What the server-level fuzz and disconnect tests run against, on loopback: the ``voxdesk
serve`` servers in-process (``/v1/realtime`` plain and over TLS, Wyoming), raw sockets that can
stop at any byte, the crash and leak watch, and one real session per dialect afterwards."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import datetime
import json
import logging
import os
import socket
import ssl
import struct
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import soxr
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from websockets.asyncio.client import ClientConnection, connect
from websockets.client import ClientProtocol
from websockets.uri import parse_uri

from voxdesk.engine.audio.silero import SileroVad
from voxdesk.engine.session import SAMPLE_RATE, StreamingEngine
from voxdesk.engine.wire.openai.events import RATE as OPENAI_RATE
from voxdesk.engine.wire.pcm import to_pcm16
from voxdesk.engine.wire.wyoming.framing import Event, EventReader, encode_event
from voxdesk.engine.wire.wyoming.info import AsrModel, ServiceInfo
from voxdesk.server.realtime.server import RealtimeServer, ServerConfig
from voxdesk.server.wyoming.config import WyomingConfig
from voxdesk.server.wyoming.server import WyomingServer

__all__ = [
    "OPENAI_PATH",
    "OPENAI_RATE",
    "TONE",
    "VLLM_PATH",
    "CrashWatch",
    "LeakWatch",
    "RawSocket",
    "TlsFiles",
    "append_json",
    "openai_session",
    "pcm",
    "pieces",
    "running",
    "self_signed",
    "vllm_session",
    "websocket_handshake",
    "wyoming_chunk",
    "wyoming_request",
    "wyoming_session",
]

VLLM_PATH = "/v1/realtime"
OPENAI_PATH = "/v1/realtime?intent=transcription"
INFO = ServiceInfo(AsrModel("fuzz", ("en",)), "0", {"name": "fuzz", "url": ""}).to_event()
SETTLE_SECONDS = 20.0


@dataclass(frozen=True)
class TlsFiles:
    """A self-signed certificate for ``localhost`` and its key."""

    cert: Path
    key: Path


def self_signed(folder: Path) -> TlsFiles:
    """A fresh self-signed certificate for ``localhost`` (a P-256 key, valid for a day)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .sign(key, hashes.SHA256())
    )
    files = TlsFiles(folder / "cert.pem", folder / "key.pem")
    files.cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    files.key.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return files


@contextlib.asynccontextmanager
async def running(
    dialect: str, engine: StreamingEngine, tls: TlsFiles | None = None
) -> AsyncIterator[RealtimeServer | WyomingServer]:
    """The server of ``dialect`` (``vllm`` and ``openai`` share ``/v1/realtime``) on a free
    loopback port, room for every concurrent cut; shut down afterwards."""
    server: RealtimeServer | WyomingServer
    if dialect == "wyoming":
        server = WyomingServer(engine, INFO, WyomingConfig(port=0, max_sessions=500))
    else:
        cert, key = (str(tls.cert), str(tls.key)) if tls else (None, None)
        server = RealtimeServer(engine, ServerConfig(port=0, max_sessions=500, ssl_certfile=cert, ssl_keyfile=key))
    await server.start()
    try:
        yield server
    finally:
        await server.shutdown()


class CrashWatch(logging.Handler):
    """Every uncaught exception while it watches: log records at ERROR or above (``websockets``'
    "connection handler failed", the server's own) and the event loop's exception handler."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.crashes: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.crashes.append(f"{record.name}: {self.format(record)}")

    def loop_exception(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        """For ``loop.set_exception_handler``."""
        self.crashes.append(f"event loop: {context.get('message')}: {context.get('exception')!r}")

    @contextlib.contextmanager
    def watching(self) -> Iterator[CrashWatch]:
        """Watch the root logger and the running loop meanwhile."""
        loop = asyncio.get_running_loop()
        root = logging.getLogger()
        root.addHandler(self)
        previous = loop.get_exception_handler()
        loop.set_exception_handler(self.loop_exception)
        try:
            yield self
        finally:
            loop.set_exception_handler(previous)
            root.removeHandler(self)


def _open_fds() -> set[int]:
    return {int(fd) for fd in os.listdir("/proc/self/fd")}


def _fd_target(fd: int) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return "?"


@dataclass
class LeakWatch:
    """The process's asyncio tasks and open descriptors when the server was idle, to compare with later."""

    tasks: int = 0
    fds: set[int] = field(default_factory=set)

    def baseline(self) -> None:
        """Take the counts now (the server started and idle, no client connected), once what
        a server loads lazily the first time has been loaded: a Silero VAD for an OpenAI
        session's ``server_vad`` (onnxruntime opens its own database on its first session)."""
        SileroVad()
        self.tasks, self.fds = len(asyncio.all_tasks()), _open_fds()

    async def settled(self, *servers: RealtimeServer | WyomingServer, timeout: float = SETTLE_SECONDS) -> float:
        """Wait until the servers hold no connection or session, their gauges read zero, and
        the tasks and descriptors are back to the baseline; the seconds it took.

        Raises:
            AssertionError: still not back at ``timeout``, naming what is left.
        """
        loop = asyncio.get_running_loop()
        started = loop.time()
        while (left := self._left(servers)) and loop.time() - started < timeout:
            await asyncio.sleep(0.02)
        if left:
            raise AssertionError(f"leaked after {timeout:g} s: {left}")
        return loop.time() - started

    def _left(self, servers: tuple[RealtimeServer | WyomingServer, ...]) -> str:
        left = []
        for server in servers:
            if server.active_connections:
                left.append(f"{server.active_connections} connections")
            if isinstance(server, RealtimeServer):
                for gauge in (server.metrics.sessions_active, server.metrics.connections_active):
                    if value := gauge._value.get():
                        left.append(f"{gauge._name} = {value:g}")
        if (tasks := asyncio.all_tasks()) and len(tasks) > self.tasks:
            names = sorted(str(t.get_coro()) for t in tasks)[:5]
            left.append(f"{len(tasks) - self.tasks} tasks more than the baseline (some: {names})")
        if extra := _open_fds() - self.fds:
            left.append(f"{len(extra)} descriptors more than the baseline: {[_fd_target(fd) for fd in extra][:5]}")
        return "; ".join(left)


class RawSocket:
    """A client socket that writes exactly the bytes it is given and can vanish at any point."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def open(cls, port: int, tls: ssl.SSLContext | None = None) -> RawSocket:
        """Connect to ``127.0.0.1:port`` (TLS completed first when ``tls`` is given)."""
        reader, writer = await asyncio.open_connection(
            "127.0.0.1", port, ssl=tls, server_hostname="localhost" if tls else None
        )
        return cls(reader, writer)

    async def send(self, data: bytes) -> None:
        """Write ``data`` and wait until the kernel took it."""
        self.writer.write(data)
        await self.writer.drain()

    def vanish(self, reset: bool) -> None:
        """Drop the connection with no goodbye: a TCP reset if ``reset``, else a bare FIN with
        no closing handshake (WebSocket close frame, TLS close_notify)."""
        sock = self.writer.get_extra_info("socket")
        if reset and sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.writer.transport.abort()


async def websocket_handshake(raw: RawSocket, path: str) -> ClientProtocol:
    """Open a WebSocket on ``raw`` with websockets' own sans-I/O client; it then frames what
    to send (``send_text``, ``data_to_send``) and parses what comes (``receive_data``)."""
    protocol = ClientProtocol(parse_uri(f"ws://127.0.0.1{path}"))
    protocol.send_request(protocol.connect())
    for data in protocol.data_to_send():
        await raw.send(data)
    while protocol.handshake_exc is None and not protocol.events_received():
        protocol.receive_data(await raw.reader.read(65_536))
    if protocol.handshake_exc is not None:
        raise protocol.handshake_exc
    return protocol


TONE = np.full(SAMPLE_RATE, 0.1, np.float32)
"""One second of a steady level: FakeTickEngine says "tick " for each 80 ms of it."""


def pcm(audio: np.ndarray, rate: int, seconds: float | None = None) -> bytes:
    """16 kHz ``audio`` as PCM16 at ``rate`` Hz, cut or looped to ``seconds`` where given."""
    if seconds is not None:
        audio = np.resize(audio, max(1, int(seconds * SAMPLE_RATE)))
    if rate != SAMPLE_RATE:
        audio = soxr.resample(audio, SAMPLE_RATE, rate).astype(np.float32)
    return to_pcm16(audio)


def pieces(data: bytes, rate: int) -> list[bytes]:
    """PCM16 ``data`` at ``rate`` Hz in 100 ms pieces."""
    size = rate // 10 * 2
    return [data[start : start + size] for start in range(0, len(data), size)]


def append_json(data: bytes) -> str:
    """An ``input_audio_buffer.append`` of PCM16 ``data`` (both realtime dialects)."""
    return json.dumps({"type": "input_audio_buffer.append", "audio": base64.b64encode(data).decode()})


async def vllm_session(url: str, tls: ssl.SSLContext | None = None, audio: np.ndarray = TONE) -> str:
    """One ``/v1/realtime`` session of 16 kHz ``audio``; its ``transcription.done`` text."""
    async with connect(url, ssl=tls) as socket:
        assert await _event(socket, "session.created")
        await socket.send(json.dumps({"type": "session.update", "model": "voxdesk-builtin"}))
        await socket.send(json.dumps({"type": "input_audio_buffer.commit"}))
        for piece in pieces(pcm(audio, SAMPLE_RATE), SAMPLE_RATE):
            await socket.send(append_json(piece))
        await socket.send(json.dumps({"type": "input_audio_buffer.commit", "final": True}))
        return str((await _event(socket, "transcription.done"))["text"])


async def openai_session(url: str, tls: ssl.SSLContext | None = None, audio: np.ndarray = TONE) -> str:
    """One OpenAI transcription turn of 16 kHz ``audio`` (sent at 24 kHz); its completed transcript."""
    async with connect(url, ssl=tls) as socket:
        assert await _event(socket, "session.created")
        for piece in pieces(pcm(audio, OPENAI_RATE), OPENAI_RATE):
            await socket.send(append_json(piece))
        await socket.send(json.dumps({"type": "input_audio_buffer.commit"}))
        completed = "conversation.item.input_audio_transcription.completed"
        return str((await _event(socket, completed))["transcript"])


async def _event(socket: ClientConnection, kind: str, timeout: float = 20.0) -> dict[str, Any]:
    """The next event of type ``kind``; an ``error`` on the way fails."""
    async with asyncio.timeout(timeout):
        while True:
            event: dict[str, Any] = json.loads(await socket.recv())
            assert event["type"] != "error", event
            if event["type"] == kind:
                return event


WYOMING_FORMAT = {"rate": SAMPLE_RATE, "width": 2, "channels": 1}


def wyoming_chunk(data: bytes) -> bytes:
    """An ``audio-chunk`` of 16 kHz PCM16 ``data``."""
    return encode_event(Event("audio-chunk", WYOMING_FORMAT, data))


def wyoming_request(audio: np.ndarray = TONE, seconds: float | None = None) -> bytes:
    """One Wyoming request of 16 kHz ``audio`` (cut or looped to ``seconds``): audio-start,
    the audio in 100 ms chunks, audio-stop."""
    chunks = b"".join(wyoming_chunk(piece) for piece in pieces(pcm(audio, SAMPLE_RATE, seconds), SAMPLE_RATE))
    return encode_event(Event("audio-start", WYOMING_FORMAT)) + chunks + encode_event(Event("audio-stop"))


async def wyoming_session(port: int, audio: np.ndarray = TONE) -> str:
    """One Wyoming request of 16 kHz ``audio``; its ``transcript`` text."""
    raw = await RawSocket.open(port)
    try:
        await raw.send(wyoming_request(audio))
        reader = EventReader()
        async with asyncio.timeout(20):
            while True:
                data = await raw.reader.read(65_536)
                assert data, "the server closed the connection before the transcript"
                reader.receive_data(data)
                for event in reader.events():
                    assert event.type != "error", event
                    if event.type == "transcript":
                        return str(event.data["text"])
    finally:
        raw.writer.close()
        with contextlib.suppress(ConnectionError):
            await raw.writer.wait_closed()
