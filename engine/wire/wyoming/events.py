"""The speech-to-text events of Wyoming as small typed models (§2), and one parsing table.

:func:`parse_event` turns a framed :class:`~.framing.Event` into its model; a type outside
the table is ``None`` (Wyoming peers ignore what they do not know, §2.5), and a known type
with bad fields raises :class:`WyomingProtocolError`. ``to_event`` goes the other way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from voxdesk.engine.wire.codes import ProtocolError, WireCode
from voxdesk.engine.wire.wyoming.framing import Event

__all__ = [
    "AudioChunk",
    "AudioFormat",
    "AudioStart",
    "AudioStop",
    "Describe",
    "Ping",
    "Transcribe",
    "Transcript",
    "TranscriptChunk",
    "TranscriptStart",
    "TranscriptStop",
    "WyomingError",
    "WyomingEvent",
    "WyomingProtocolError",
    "parse_event",
]


class WyomingProtocolError(ProtocolError):
    """The peer sent a known event with fields that break the protocol; answered with ``error``."""


@dataclass(frozen=True)
class AudioFormat:
    """PCM layout: samples per second, bytes per sample, interleaved channels (§2.3)."""

    rate: int
    width: int
    channels: int

    def data(self) -> dict[str, Any]:
        """The four fields every audio event repeats."""
        return {"rate": self.rate, "width": self.width, "channels": self.channels, "timestamp": None}


@dataclass(frozen=True)
class Describe:
    """``describe``: asks for ``info``."""

    def to_event(self) -> Event:
        """As a framed event."""
        return Event("describe")


@dataclass(frozen=True)
class Transcribe:
    """``transcribe``: a request's options, all optional (§2.2)."""

    name: str | None = None
    language: str | None = None

    def to_event(self) -> Event:
        """As a framed event."""
        fields = {"name": self.name, "language": self.language}
        return Event("transcribe", {key: value for key, value in fields.items() if value})


@dataclass(frozen=True)
class AudioStart:
    """``audio-start``: audio of one request follows."""

    format: AudioFormat

    def to_event(self) -> Event:
        """As a framed event."""
        return Event("audio-start", self.format.data())


@dataclass(frozen=True)
class AudioChunk:
    """``audio-chunk``: PCM bytes and their format, repeated in every chunk."""

    format: AudioFormat
    audio: bytes

    def to_event(self) -> Event:
        """As a framed event."""
        return Event("audio-chunk", self.format.data(), self.audio)


@dataclass(frozen=True)
class AudioStop:
    """``audio-stop``: the request's audio is complete."""

    def to_event(self) -> Event:
        """As a framed event."""
        return Event("audio-stop", {"timestamp": None})


@dataclass(frozen=True)
class Ping:
    """``ping``: answered with ``pong`` carrying the same text (§2.5)."""

    text: str | None = None


@dataclass(frozen=True)
class TranscriptStart:
    """``transcript-start``: streamed text follows (§2.4)."""

    language: str | None = None

    def to_event(self) -> Event:
        """As a framed event."""
        return Event("transcript-start", {"language": self.language} if self.language else {})


@dataclass(frozen=True)
class TranscriptChunk:
    """``transcript-chunk``: text appended to what was streamed before."""

    text: str

    def to_event(self) -> Event:
        """As a framed event."""
        return Event("transcript-chunk", {"text": self.text})


@dataclass(frozen=True)
class Transcript:
    """``transcript``: a request's final text, always sent once per ``audio-stop``."""

    text: str
    language: str | None = None

    def to_event(self) -> Event:
        """As a framed event."""
        data: dict[str, Any] = {"text": self.text}
        if self.language:
            data["language"] = self.language
        return Event("transcript", data)


@dataclass(frozen=True)
class TranscriptStop:
    """``transcript-stop``: the end of a streamed transcript, after ``transcript``."""

    def to_event(self) -> Event:
        """As a framed event."""
        return Event("transcript-stop")


@dataclass(frozen=True)
class WyomingError:
    """``error``: what went wrong, with an optional machine-readable code."""

    text: str
    code: str | None = None

    def to_event(self) -> Event:
        """As a framed event."""
        return Event("error", {"text": self.text, **({"code": self.code} if self.code else {})})


WyomingEvent = (
    Describe
    | Transcribe
    | AudioStart
    | AudioChunk
    | AudioStop
    | Ping
    | TranscriptStart
    | TranscriptChunk
    | Transcript
    | TranscriptStop
    | WyomingError
)


def _optional_str(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise WyomingProtocolError(WireCode.INVALID_EVENT, f"'{key}' must be a string")
    return value or None


def _required_str(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise WyomingProtocolError(WireCode.INVALID_EVENT, f"'{key}' must be a string")
    return value


def _positive_int(data: dict[str, Any], key: str) -> int:
    value = data.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise WyomingProtocolError(
            WireCode.INVALID_AUDIO, "audio events need positive whole 'rate', 'width' and 'channels'"
        )
    return value


def _format(data: dict[str, Any]) -> AudioFormat:
    return AudioFormat(_positive_int(data, "rate"), _positive_int(data, "width"), _positive_int(data, "channels"))


_PARSERS: dict[str, Callable[[Event], WyomingEvent]] = {
    "describe": lambda e: Describe(),
    "transcribe": lambda e: Transcribe(_optional_str(e.data, "name"), _optional_str(e.data, "language")),
    "audio-start": lambda e: AudioStart(_format(e.data)),
    "audio-chunk": lambda e: AudioChunk(_format(e.data), e.payload),
    "audio-stop": lambda e: AudioStop(),
    "ping": lambda e: Ping(_optional_str(e.data, "text")),
    "transcript-start": lambda e: TranscriptStart(_optional_str(e.data, "language")),
    "transcript-chunk": lambda e: TranscriptChunk(_required_str(e.data, "text")),
    "transcript": lambda e: Transcript(_required_str(e.data, "text"), _optional_str(e.data, "language")),
    "transcript-stop": lambda e: TranscriptStop(),
    "error": lambda e: WyomingError(_required_str(e.data, "text"), _optional_str(e.data, "code")),
}
"""Every event type Voxdesk reads, by wire name."""


def parse_event(event: Event) -> WyomingEvent | None:
    """The model of ``event``, or ``None`` for a type Voxdesk does not use.

    Raises:
        WyomingProtocolError: a known type whose fields are missing or of the wrong kind.
    """
    parser = _PARSERS.get(event.type)
    return parser(event) if parser is not None else None
