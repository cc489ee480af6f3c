"""Every event of vLLM's ``/v1/realtime`` protocol, as small typed models (no I/O).

Serialization matches vLLM 0.33 byte for byte: ``type`` first, then every field in
declaration order (``null`` included), compact JSON (``docs/realtime-protocol.md`` §2).
Parsing routes on ``type`` through one table and ignores extra keys, as vLLM does.

Voxdesk adds one opt-in extension: a client that sends ``"provisional": true`` in
``session.update`` also receives ``transcription.provisional`` events. vLLM ignores the field.
"""

from __future__ import annotations

import dataclasses
import json
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from voxdesk.engine.wire.codes import SENT, Dialect, ProtocolError, WireCode
from voxdesk.engine.wire.jsontext import loads, loads_unicode

__all__ = [
    "CLIENT_EVENTS",
    "WIRE_ERROR_CODES",
    "ClientEvent",
    "ErrorEvent",
    "InputAudioBufferAppend",
    "InputAudioBufferCommit",
    "ServerEvent",
    "SessionCreated",
    "SessionUpdate",
    "TranscriptionDelta",
    "TranscriptionDone",
    "TranscriptionProvisional",
    "Usage",
    "delta_json",
    "parse_client_event",
    "parse_server_event",
]


WIRE_ERROR_CODES = SENT[Dialect.VLLM]
"""The ``error.code`` values a server sends: vLLM's seven, then Voxdesk's additions."""


class _Event:
    type: ClassVar[str]

    def to_dict(self) -> dict[str, Any]:
        """The wire object: ``type`` first, then the fields in declaration order."""
        body = {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)}  # type: ignore[arg-type]
        return {"type": self.type, **body}

    def to_json(self) -> str:
        """Compact JSON exactly as vLLM's ``model_dump_json()`` writes it."""
        return _ENCODER.encode(self.to_dict())


_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)  # built once, not per event


def delta_json(text: str) -> str:
    """``TranscriptionDelta(delta=text).to_json()``, without building the event (one per step)."""
    return f'{{"type":"transcription.delta","delta":{_ENCODER.encode(text)}}}'


def _plain(value: Any) -> Any:
    return value.to_dict() if isinstance(value, Usage) else value


# Client → server (§2.1)


@dataclass(frozen=True)
class SessionUpdate(_Event):
    """Chooses the model; must precede any commit. No reply on success."""

    type: ClassVar[str] = "session.update"
    model: Any = None  # vLLM reads it raw: any JSON value, checked against the served name
    provisional: bool = False  # Voxdesk extension

    def to_dict(self) -> dict[str, Any]:
        """The wire object; the extension field only when asked for, so vLLM sees its own shape."""
        return {"type": self.type, "model": self.model, **({"provisional": True} if self.provisional else {})}


@dataclass(frozen=True)
class InputAudioBufferAppend(_Event):
    """Base64 of raw PCM16 little-endian mono samples at 16 kHz."""

    type: ClassVar[str] = "input_audio_buffer.append"
    audio: str


@dataclass(frozen=True)
class InputAudioBufferCommit(_Event):
    """``final`` false starts a generation; true ends its audio."""

    type: ClassVar[str] = "input_audio_buffer.commit"
    final: bool = False


# Server → client (§2.2)


@dataclass(frozen=True)
class SessionCreated(_Event):
    """Sent right after the connection is accepted."""

    type: ClassVar[str] = "session.created"
    id: str = field(default_factory=lambda: "sess-" + secrets.token_hex(8))
    created: int = field(default_factory=lambda: int(time.time()))


@dataclass(frozen=True)
class TranscriptionDelta(_Event):
    """Committed text appended to the current generation (may be ``""``)."""

    type: ClassVar[str] = "transcription.delta"
    delta: str

    def to_json(self) -> str:
        """The wire text (see :func:`delta_json`)."""
        return delta_json(self.delta)


@dataclass(frozen=True)
class Usage:
    """vLLM's ``UsageInfo``, field for field."""

    prompt_tokens: int = 0
    total_tokens: int = 0
    completion_tokens: int | None = 0
    prompt_tokens_details: dict[str, Any] | None = None
    completion_tokens_details: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The wire object, every field included."""
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class TranscriptionDone(_Event):
    """End of a generation: all its deltas joined, and token usage."""

    type: ClassVar[str] = "transcription.done"
    text: str
    usage: Usage | None = field(default_factory=Usage)


@dataclass(frozen=True)
class TranscriptionProvisional(_Event):
    """Voxdesk extension: text after the deltas so far that may still change (replaces the last)."""

    type: ClassVar[str] = "transcription.provisional"
    text: str


@dataclass(frozen=True)
class ErrorEvent(_Event):
    """An error; the connection stays open unless the server says otherwise by closing it."""

    type: ClassVar[str] = "error"
    error: str
    code: str | None = None


ClientEvent = SessionUpdate | InputAudioBufferAppend | InputAudioBufferCommit
ServerEvent = SessionCreated | TranscriptionDelta | TranscriptionDone | TranscriptionProvisional | ErrorEvent

_TRUE = {"true", "1", "yes", "on", "t", "y"}
_FALSE = {"false", "0", "no", "off", "f", "n"}


def _lax_bool(value: Any, name: str) -> bool:
    """Pydantic's lax boolean: what vLLM accepts for ``final``."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise ProtocolError(WireCode.PROCESSING_ERROR, f"{name}: Input should be a valid boolean")


def _session_update(data: dict[str, Any]) -> SessionUpdate:
    if data.get("model") is None:
        raise ProtocolError(WireCode.INVALID_EVENT, "Missing required field: model")
    provisional = data.get("provisional", False)
    return SessionUpdate(model=data["model"], provisional=provisional is True)


def _append(data: dict[str, Any]) -> InputAudioBufferAppend:
    audio = data.get("audio")
    if not isinstance(audio, str):
        problem = "Field required" if audio is None else "Input should be a valid string"
        raise ProtocolError(WireCode.PROCESSING_ERROR, f"audio: {problem}")
    return InputAudioBufferAppend(audio=audio)


def _commit(data: dict[str, Any]) -> InputAudioBufferCommit:
    return InputAudioBufferCommit(final=_lax_bool(data.get("final", False), "final"))


CLIENT_EVENTS: dict[str, Callable[[dict[str, Any]], ClientEvent]] = {
    SessionUpdate.type: _session_update,
    InputAudioBufferAppend.type: _append,
    InputAudioBufferCommit.type: _commit,
}
"""The one routing table from a client event's ``type`` to its parser."""


def parse_client_event(text: str) -> ClientEvent:
    """Parse one text frame from a client.

    Raises:
        ProtocolError: with vLLM's code and message for JSON, type and field errors (§4).
    """
    try:
        data = loads(text)
    except ValueError:
        raise ProtocolError(WireCode.INVALID_JSON, "Invalid JSON") from None
    if not isinstance(data, dict):
        raise ProtocolError(WireCode.PROCESSING_ERROR, f"'{type(data).__name__}' object has no attribute 'get'")
    kind = data.get("type")
    parser = CLIENT_EVENTS.get(kind) if isinstance(kind, str) else None
    if parser is None:
        raise ProtocolError(WireCode.UNKNOWN_EVENT, f"Unknown event type: {data.get('type')}")
    return parser(data)


def parse_server_event(text: str) -> ServerEvent | None:
    """Parse one frame from a server; ``None`` for an event type this client does not know.
    A field of a known event with the wrong type is read as its default.

    Raises:
        ValueError: not a JSON object (nested past the parser included), or a string in it
            that is not Unicode (a lone surrogate): the server is broken.
    """
    data = loads_unicode(text)
    if not isinstance(data, dict):
        raise ValueError(f"a JSON {type(data).__name__}, not an object")
    kind = data.get("type")
    if kind == SessionCreated.type:
        return SessionCreated(id=str(data.get("id", "")), created=_count(data.get("created")) or 0)
    if kind == TranscriptionDelta.type:
        return TranscriptionDelta(delta=str(data.get("delta") or ""))
    if kind == TranscriptionDone.type:
        return TranscriptionDone(text=str(data.get("text") or ""), usage=_usage(data.get("usage")))
    if kind == TranscriptionProvisional.type:
        return TranscriptionProvisional(text=str(data.get("text") or ""))
    if kind == ErrorEvent.type:
        code = data.get("code")
        return ErrorEvent(error=str(data.get("error", "")), code=code if isinstance(code, str) else None)
    return None


def _usage(value: object) -> Usage | None:
    """A server's ``usage`` object, fields of the wrong type read as their defaults."""
    if not isinstance(value, dict):
        return None
    details = {
        k: v for k in ("prompt_tokens_details", "completion_tokens_details") if isinstance(v := value.get(k), dict)
    }
    return Usage(
        prompt_tokens=_count(value.get("prompt_tokens")) or 0,
        total_tokens=_count(value.get("total_tokens")) or 0,
        completion_tokens=_count(value.get("completion_tokens", 0)),
        **details,
    )


def _count(value: object) -> int | None:
    """``value`` if it is a whole number (not a bool)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None
