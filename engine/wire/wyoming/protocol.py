"""The server side of Wyoming speech-to-text as a state machine with no I/O (§3, §8.1), on
:class:`~voxdesk.engine.wire.core.ServerCore` (the actions and audio account every dialect keeps).

Feed it what the client sent (:meth:`ServerProtocol.receive_data`), then:

- call :meth:`~ServerProtocol.events_received` and carry out each action
  (:class:`StartRequest`, :class:`~voxdesk.engine.wire.core.AudioReceived`,
  :class:`~voxdesk.engine.wire.core.EndOfAudio`);
- write :meth:`~ServerProtocol.data_to_send` to the socket;
- close the connection once :attr:`~ServerProtocol.closed` is true (malformed framing, §8.1 item 11).

Report the engine's output with :meth:`~ServerProtocol.send_text` and
:meth:`~ServerProtocol.send_transcript` (and :meth:`~ServerProtocol.send_error`); after each,
write ``data_to_send()`` again.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from enum import StrEnum

from voxdesk.engine.session import SAMPLE_RATE
from voxdesk.engine.wire.codes import Dialect, ProtocolError, WireCode, spell
from voxdesk.engine.wire.core import AudioReceived, EndOfAudio, Log, ServerCore
from voxdesk.engine.wire.pcm import AudioConverter
from voxdesk.engine.wire.wyoming.audio import check_format
from voxdesk.engine.wire.wyoming.events import (
    AudioChunk,
    AudioStart,
    AudioStop,
    Describe,
    Ping,
    Transcribe,
    Transcript,
    TranscriptChunk,
    TranscriptStart,
    TranscriptStop,
    WyomingError,
    WyomingEvent,
    WyomingProtocolError,
    parse_event,
)
from voxdesk.engine.wire.wyoming.framing import Event, EventReader, FramingError, encode_event

__all__ = ["Request", "ServerProtocol", "StartRequest"]

logger = logging.getLogger(__name__)


class Request(StrEnum):
    """Where the connection stands with respect to a request (one engine session)."""

    IDLE = "idle"  # between requests: transcribe, audio-start or a first audio-chunk opens one
    STREAMING = "streaming"  # audio goes to the request's engine session
    FINALIZING = "finalizing"  # audio-stop received: the transcript is on its way


@dataclass(frozen=True)
class StartRequest:
    """Open an engine session; its audio follows as ``AudioReceived``."""

    language: str | None


_ALLOWED: dict[Request, frozenset[type[WyomingEvent]]] = {
    Request.IDLE: frozenset({Transcribe, AudioStart, AudioChunk, AudioStop}),
    Request.STREAMING: frozenset({AudioStart, AudioChunk, AudioStop}),
    Request.FINALIZING: frozenset(),
}
"""The request events each state takes; ``describe``, ``ping`` and unknown types go in any."""


class ServerProtocol(ServerCore[StartRequest]):
    """One Wyoming connection, server side; ``audio-stop`` is ``EndOfAudio`` (a transcript must follow).

    Args:
        info: the ``info`` event answering ``describe``.
        max_connection_samples: audio allowed over the whole connection; beyond it chunks are
            dropped with a ``buffer_full`` error.
        log: where to log about this connection.
    """

    audio_limit = "connection audio limit reached ({limit:g} s)"

    def __init__(self, info: Event, *, max_connection_samples: int = 4 * 3600 * SAMPLE_RATE, log: Log = logger) -> None:
        super().__init__(max_session_samples=max_connection_samples, log=log)
        self.info = info
        self.request = Request.IDLE
        self.closed = False
        self._reader = EventReader()
        self._language: str | None = None
        self._converter = AudioConverter()
        self._refused = False  # the open request's audio was refused: drop the rest of it
        self._streamed = False  # transcript-start sent for the open request
        self._outgoing = bytearray()

    # Input from the client

    def receive_data(self, data: bytes) -> None:
        """Handle bytes from the client; ``b""`` means the client closed its side."""
        if self.closed:
            return
        try:
            if data:
                self._reader.receive_data(data)
            else:
                self.closed = True
                self._reader.check_eof()
            for event in self._reader.events():
                self._receive(event)
        except FramingError as error:
            self.log.info("closing: %s", error)
            self.closed = True

    def data_to_send(self) -> bytes:
        """Bytes to write, in order; the buffer is emptied."""
        outgoing, self._outgoing = bytes(self._outgoing), bytearray()
        return outgoing

    # Output from the engine

    def send_text(self, text: str) -> None:
        """Stream appended text of the open request: ``transcript-start`` once, then a chunk."""
        if not text:
            return
        self._start_streaming()
        self._send(TranscriptChunk(text).to_event())

    def send_transcript(self, text: str, language: str | None = None) -> None:
        """Finish the request: ``transcript``, then ``transcript-stop`` (§3). The connection is
        ready for the next request."""
        self._start_streaming()
        self._send(Transcript(text, language).to_event())
        self._send(TranscriptStop().to_event())
        self._reset()

    def send_error(self, code: WireCode, text: str) -> None:
        """Queue an ``error`` event."""
        self._send(WyomingError(text, spell(code, Dialect.WYOMING)).to_event())

    # Handlers

    def _receive(self, event: Event) -> None:
        try:
            parsed = parse_event(event)
            if parsed is None:
                self.log.debug("ignoring %r", event.type)  # unknown events are dropped (§2.5)
            elif isinstance(parsed, Describe):
                self._send(self.info)
            elif isinstance(parsed, Ping):
                self._send(Event("pong", {"text": parsed.text} if parsed.text else {}))
            elif isinstance(parsed, Transcribe | AudioStart | AudioChunk | AudioStop):
                self._check_allowed(parsed, event.type)
                self._request_event(parsed)
            else:
                raise WyomingProtocolError(WireCode.INVALID_EVENT, f"a client does not send {event.type!r}")
        except ProtocolError as error:
            self.send_error(error.code, error.message)

    def _request_event(self, event: Transcribe | AudioStart | AudioChunk | AudioStop) -> None:
        if isinstance(event, Transcribe):
            # One model: its name is not checked, the default serves every request (§8.1 item 4).
            self._language = event.language
        elif isinstance(event, AudioChunk):
            self._audio_chunk(event)
        elif isinstance(event, AudioStop):
            self._audio_stop()
        elif self.request is Request.IDLE:  # audio-start
            self._open()

    def _check_allowed(self, event: WyomingEvent, name: str) -> None:
        if type(event) not in _ALLOWED[self.request]:
            raise WyomingProtocolError(WireCode.INVALID_EVENT, f"{name!r} while the request is {self.request}")

    def _audio_chunk(self, event: AudioChunk) -> None:
        if self.request is Request.IDLE:
            self._open()  # audio-start is optional (§8.1 item 5)
        if self._refused or not event.audio:
            return
        audio_format = event.format
        try:
            check_format(audio_format, len(event.audio))
            samples = self._converter.convert(event.audio, audio_format.rate, audio_format.width, audio_format.channels)
            self._deliver(samples)
        except ProtocolError:
            self._refused = True  # one error per request, then its audio is dropped
            raise

    def _audio_stop(self) -> None:
        if self.request is Request.IDLE:
            self.send_transcript("", self._language)  # no audio: an empty transcript (§7, §8.1 item 7)
            return
        if not self._refused and len(tail := self._converter.flush()):
            self._act(AudioReceived(tail))
        self.request = Request.FINALIZING
        self._act(EndOfAudio())

    def _open(self) -> None:
        self.request = Request.STREAMING
        self._act(StartRequest(self._language))

    def _start_streaming(self) -> None:
        if not self._streamed:
            self._streamed = True
            self._send(TranscriptStart(self._language).to_event())

    def _reset(self) -> None:
        self.request = Request.IDLE
        self._language = None
        self._converter = AudioConverter()
        self._refused = self._streamed = False

    def _send(self, event: Event) -> None:
        self._outgoing += encode_event(event)
