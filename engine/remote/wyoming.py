"""The Wyoming engine: the streaming-session interface over a Wyoming speech-to-text server
(wyoming-faster-whisper, ``voxdesk serve --wyoming``), following the client checklist (§8.2).

One stream is one request on a new connection: ``transcribe``, ``audio-start``, the audio as
16 kHz 16-bit mono ``audio-chunk``\\ s, ``audio-stop``, then a wait for ``transcript``. Streamed
``transcript-chunk`` text is shown as provisional text and replaced by the final transcript,
which becomes the one committed delta.

Several servers may be given (``url`` lists them, separated by commas). A refused or dropped
connection (or one that ends, or goes silent for the read timeout, before the transcript) is a
non-fatal ``StreamError`` (``connection_lost``) and the request moves to the next server, with
backoff once every server has failed in a row (:mod:`voxdesk.engine.failover`): the streamed
text shown so far is withdrawn (``TextRetracted``) and the whole request's audio is sent
again, as the server finalizes nothing before its ``transcript``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from voxdesk.engine.errors import EngineUnavailable
from voxdesk.engine.events import (
    EngineEvent,
    ProvisionalText,
    StreamError,
    StreamErrorCode,
    TextDelta,
    UtteranceDone,
    UtteranceStats,
)
from voxdesk.engine.failover import Failover, HeardAudio, ServerLost, Servers, split_urls
from voxdesk.engine.session import SAMPLE_RATE, ProgressCallback
from voxdesk.engine.wire.wyoming.address import parse_tcp_uri
from voxdesk.engine.wire.wyoming.audio import to_pcm16
from voxdesk.engine.wire.wyoming.events import (
    AudioChunk,
    AudioFormat,
    AudioStart,
    AudioStop,
    Describe,
    Transcribe,
    Transcript,
    TranscriptChunk,
    WyomingError,
    WyomingProtocolError,
    parse_event,
)
from voxdesk.engine.wire.wyoming.framing import Event, EventReader, FramingError, encode_event
from voxdesk.engine.wire.wyoming.info import AsrProgram, parse_asr_programs

__all__ = ["WyomingEngine", "WyomingSettings"]

_PCM16 = AudioFormat(SAMPLE_RATE, 2, 1)
_REPLAY_SAMPLES = SAMPLE_RATE  # audio per audio-chunk when replaying to a new server


@dataclass(frozen=True)
class WyomingSettings:
    """Where the server is and what to ask it for."""

    url: str  # tcp://HOST:PORT; several: comma-separated
    model: str = ""  # a model the server's info lists; "" lets the server choose
    language: str | None = None  # e.g. "en"; None lets the server choose
    connect_timeout: float = 10.0
    read_timeout: float = 30.0  # the longest wait for info, and for the transcript after audio-stop
    max_retries: int = 5  # failed rounds over every server in a row before a request gives up


class _Peer:
    """Events over one TCP connection, read and written with the sans-I/O framing."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._framing = EventReader()
        self._events: deque[Event] = deque()

    async def write(self, event: Event) -> None:
        self._writer.write(encode_event(event))
        await self._writer.drain()

    async def read(self) -> Event | None:
        """The next event; ``None`` at the end of the stream. Raises ``FramingError``."""
        while not self._events:
            data = await self._reader.read(64 * 1024)
            if not data:
                self._framing.check_eof()
                return None
            self._framing.receive_data(data)
            self._events.extend(self._framing.events())
        return self._events.popleft()

    async def close(self) -> None:
        self._writer.close()
        with contextlib.suppress(ConnectionError):
            await self._writer.wait_closed()


class WyomingEngine:
    """A speech engine on a Wyoming STT server. See :mod:`voxdesk.engine.session`."""

    name = "wyoming"
    detects_speech = False

    def __init__(self, settings: WyomingSettings) -> None:
        self.settings = settings
        self.servers = Servers(split_urls(settings.url) or [settings.url])
        self._addresses = {url: parse_tcp_uri(url) for url in self.servers.urls}
        self.program: AsrProgram | None = None

    @property
    def host(self) -> str:
        """The host of the server requests start on now: the last one that answered."""
        return self._addresses[self.servers.url][0]

    @property
    def port(self) -> int:
        """The port of the server requests start on now."""
        return self._addresses[self.servers.url][1]

    async def load(self, progress: ProgressCallback | None = None) -> None:
        """Ask the server what it offers (``describe``) and check it has the model and language;
        the first server that answers becomes current.

        Raises:
            EngineUnavailable: no server reachable, no installed ASR program, or no installed model
                for the settings' model and language.
        """

        async def probe() -> None:
            if progress:
                progress(f"connecting to {self.servers.url}", 0.0)
            try:
                peer = await self._connect()
                try:
                    await peer.write(Describe().to_event())
                    info = await asyncio.wait_for(self._read_info(peer), self.settings.read_timeout)
                finally:
                    await peer.close()
                programs = parse_asr_programs(info)
            except (OSError, TimeoutError, FramingError, WyomingProtocolError) as exc:
                raise ServerLost(f"cannot reach the Wyoming server at {self.servers.url}: {exc}") from exc
            self.program = self._choose(programs)

        await self.servers.first_answering(probe)
        if progress:
            progress("connected", 1.0)

    def stream(self, audio: AsyncIterable[np.ndarray]) -> AsyncIterator[EngineEvent]:
        """Open one request over ``audio``; see :mod:`voxdesk.engine.session`."""
        return _WyomingSession(self, audio).run()

    async def aclose(self) -> None:
        """Nothing to release: connections live only as long as their stream."""

    async def _connect(self) -> _Peer:
        """A new connection to the current server. Raises ``OSError`` or ``TimeoutError``."""
        opening = asyncio.open_connection(self.host, self.port)
        reader, writer = await asyncio.wait_for(opening, self.settings.connect_timeout)
        return _Peer(reader, writer)

    @staticmethod
    async def _read_info(peer: _Peer) -> Event:
        while (event := await peer.read()) is not None:
            if event.type == "info":
                return event
        raise ConnectionResetError("the server closed the connection without answering describe")

    def _choose(self, programs: list[AsrProgram]) -> AsrProgram:
        """The first installed ASR program with a model for the settings (§8.2 item 1)."""
        wanted_model, language = self.settings.model, self.settings.language
        for program in programs:
            models = [m for m in program.models if m.installed and (not wanted_model or m.name == wanted_model)]
            if program.installed and any(not language or language in m.languages for m in models):
                return program
        offered = ", ".join(f"{m.name} ({' '.join(m.languages[:8])})" for p in programs for m in p.models) or "nothing"
        wanted = f"model {wanted_model}" if wanted_model else "model"
        wanted += f" for language {language}" if language else ""
        raise EngineUnavailable(f"the Wyoming server at {self.servers.url} has no {wanted}; it offers: {offered}")


class _WyomingSession:
    """One stream: one request, on as many connections to as many servers as it takes."""

    def __init__(self, engine: WyomingEngine, audio: AsyncIterable[np.ndarray]) -> None:
        self._engine = engine
        self._audio = HeardAudio(audio)  # the whole request, sent again to a new server
        self._failover = Failover(engine.servers, engine.settings.max_retries, "Wyoming server")

    def run(self) -> AsyncIterator[EngineEvent]:
        return self._failover.run(self._attempt, self._audio)

    async def _attempt(self) -> AsyncIterator[EngineEvent]:
        """The request on a new connection to the current server, from its first sample.

        Raises:
            ServerLost: the server cannot be reached, or failed before the transcript.
        """
        try:
            peer = await self._engine._connect()
        except (OSError, TimeoutError) as exc:
            raise ServerLost(f"cannot reach it: {exc or type(exc).__name__}") from exc
        sender = asyncio.create_task(self._send(peer))
        try:
            async for event in self._events(peer, sender):
                yield event
        finally:
            sender.cancel()
            with contextlib.suppress(asyncio.CancelledError, ConnectionError):
                await sender
            await peer.close()

    async def _events(self, peer: _Peer, sender: asyncio.Task[None]) -> AsyncIterator[EngineEvent]:
        streamed = ""
        try:
            while (event := await self._receive(peer, sender)) is not None:
                parsed = parse_event(event)
                if isinstance(parsed, TranscriptChunk):
                    streamed += parsed.text
                    yield ProvisionalText(streamed, self._audio.seconds)
                elif isinstance(parsed, Transcript):
                    yield TextDelta(parsed.text, self._audio.seconds)
                    yield self._done(parsed.text)
                    return
                elif isinstance(parsed, WyomingError):  # a transcript still follows (§8.1 item 7)
                    yield StreamError(_stream_code(parsed.code), parsed.text, self._audio.seconds, fatal=False)
        except (ConnectionError, FramingError, WyomingProtocolError, TimeoutError) as exc:
            raise ServerLost(f"connection failed: {exc or type(exc).__name__}") from exc
        raise ServerLost("it closed the connection before the transcript")

    async def _send(self, peer: _Peer) -> None:
        settings = self._engine.settings
        await peer.write(Transcribe(settings.model or None, settings.language).to_event())
        await peer.write(AudioStart(_PCM16).to_event())
        for piece in self._audio.replay(_REPLAY_SAMPLES):
            await peer.write(AudioChunk(_PCM16, to_pcm16(piece)).to_event())
        while (chunk := await self._audio.next()) is not None:
            if len(chunk):
                await peer.write(AudioChunk(_PCM16, to_pcm16(chunk)).to_event())
        await peer.write(AudioStop().to_event())

    async def _receive(self, peer: _Peer, sender: asyncio.Task[None]) -> Event | None:
        """The next event. Re-raises a failure of the audio sender (bad audio) at once; once all
        audio is sent, waits at most the read timeout (``TimeoutError``)."""
        reading = asyncio.ensure_future(peer.read())
        try:
            while not reading.done():
                waiting: set[asyncio.Future[Any]] = {reading} if sender.done() else {reading, sender}
                timeout = self._engine.settings.read_timeout if sender.done() else None
                done, _ = await asyncio.wait(waiting, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
                if sender in done and not sender.cancelled() and (error := sender.exception()) is not None:
                    raise error
                if not done:
                    raise TimeoutError(f"no transcript within {timeout:g} s of the end of the audio")
            return reading.result()
        finally:
            reading.cancel()

    def _done(self, text: str) -> UtteranceDone:
        stats = UtteranceStats(audio_seconds=self._audio.seconds, decode_seconds=None, partial_decodes=0)
        return UtteranceDone(text, self._audio.seconds, 0.0, self._audio.seconds, stats)


def _stream_code(code: str | None) -> StreamErrorCode:
    try:
        return StreamErrorCode(code or StreamErrorCode.ERROR)
    except ValueError:
        return StreamErrorCode.ERROR
