"""The Wyoming engine: the streaming-session interface over a Wyoming speech-to-text server
(wyoming-faster-whisper, ``voxdesk serve --wyoming``), following the client checklist (§8.2).

One stream is one request on a new connection: ``transcribe``, ``audio-start``, the audio as
16 kHz 16-bit mono ``audio-chunk``\\ s, ``audio-stop``, then a wait for ``transcript``. Streamed
``transcript-chunk`` text is shown as provisional text and replaced by the final transcript,
which becomes the one committed delta.

Several servers may be given (``url`` lists them, separated by commas). A refused or dropped
connection (or one that ends before the transcript) is a non-fatal ``StreamError``
(``connection_lost``) and the request moves to the next server, with backoff once every server
has failed in a row (:mod:`voxdesk.engine.remote.session`): the streamed text shown so far is
withdrawn (``TextRetracted``) and the whole request's audio is sent again, as the server
finalizes nothing before its ``transcript``. A server silent for ``read_timeout`` (no ``info``
at load, nothing after ``audio-stop``) stopped answering: the session module says what follows.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Iterator
from dataclasses import dataclass

import numpy as np

from voxdesk.engine.errors import EngineUnavailable
from voxdesk.engine.events import EngineEvent, ProvisionalText, StreamError, TextDelta
from voxdesk.engine.failover import split_urls
from voxdesk.engine.remote.session import ClientEngine, ClientSession, Link, stream_code, within
from voxdesk.engine.remote.transports import TcpTransport
from voxdesk.engine.session import SAMPLE_RATE
from voxdesk.engine.wire.jsontext import check_unicode
from voxdesk.engine.wire.pcm import to_pcm16
from voxdesk.engine.wire.wyoming.address import parse_tcp_uri
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
    parse_event,
)
from voxdesk.engine.wire.wyoming.framing import Event
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


class WyomingEngine(ClientEngine[Event]):
    """A speech engine on a Wyoming STT server. See :mod:`voxdesk.engine.session`."""

    name = "wyoming"
    kind = "Wyoming server"

    def __init__(self, settings: WyomingSettings) -> None:
        super().__init__(
            split_urls(settings.url) or [settings.url], TcpTransport(settings.connect_timeout), settings.max_retries
        )
        self.settings = settings
        self._addresses = {url: parse_tcp_uri(url) for url in self.servers.urls}
        self.program: AsrProgram | None = None

    @property
    def host(self) -> str:
        """The host of the server requests start on now: the last one that answered."""
        return self._addresses[self.url][0]

    @property
    def port(self) -> int:
        """The port of the server requests start on now."""
        return self._addresses[self.url][1]

    async def _probe(self, link: Link[Event]) -> None:
        """The server's ``info`` (``describe``, within the read timeout) lists an installed ASR
        program with the settings' model and language; it becomes :attr:`program`."""
        await link.send(Describe().to_event())
        seconds = self.settings.read_timeout
        info = await within(seconds, _read_info(link), f"it did not answer describe within {seconds:g} s")
        self.program = self._choose(parse_asr_programs(info))

    def _session(self, audio: AsyncIterable[np.ndarray]) -> _WyomingSession:
        return _WyomingSession(self, audio)

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
        raise EngineUnavailable(f"the Wyoming server at {self.url} has no {wanted}; it offers: {offered}")


async def _read_info(link: Link[Event]) -> Event:
    while (event := await link.receive()) is not None:
        if event.type == "info":
            return event
    raise ConnectionResetError("the server closed the connection without answering describe")


class _WyomingSession(ClientSession[Event]):
    """One stream: one request, on as many connections to as many servers as it takes."""

    engine: WyomingEngine

    def __init__(self, engine: WyomingEngine, audio: AsyncIterable[np.ndarray]) -> None:
        super().__init__(engine, audio)
        self.read_timeout = engine.settings.read_timeout  # for the transcript after audio-stop
        self._streamed = ""  # this connection's transcript-chunk text

    async def _open(self, link: Link[Event]) -> None:
        self._streamed = ""
        settings = self.engine.settings
        await link.send(Transcribe(settings.model or None, settings.language).to_event())
        await link.send(AudioStart(_PCM16).to_event())

    async def _send_audio(self, link: Link[Event]) -> None:
        async for chunk in self._chunks(_REPLAY_SAMPLES):
            if len(chunk):
                await link.send(AudioChunk(_PCM16, to_pcm16(chunk)).to_event())
        await link.send(AudioStop().to_event())

    def _events(self, frame: Event) -> Iterator[EngineEvent]:
        check_unicode(frame.data)
        parsed = parse_event(frame)
        if isinstance(parsed, TranscriptChunk):
            self._streamed += parsed.text
            yield ProvisionalText(self._streamed, self.audio.seconds)
        elif isinstance(parsed, Transcript):
            yield TextDelta(parsed.text, self.audio.seconds)
            yield self._done(parsed.text)
        elif isinstance(parsed, WyomingError):  # a transcript still follows (§8.1 item 7)
            yield StreamError(stream_code(parsed.code), parsed.text, self.audio.seconds, fatal=False)
