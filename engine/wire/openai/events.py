"""The wire shapes of OpenAI's Realtime *transcription* sessions (GA), as plain JSON objects.

Server events are built here with a unique ``event_id`` each; client events are parsed into
small records. Field names and shapes follow ``shared/docs/openai-realtime-reference.md``
(§3, §4, §6); section numbers in comments refer to it.
"""

from __future__ import annotations

import itertools
import json
import re
import secrets
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

from voxdesk.engine.wire.codes import Dialect, ProtocolError, WireCode, spell
from voxdesk.engine.wire.jsontext import loads

__all__ = [
    "RATE",
    "ClientFrame",
    "OpenAIRequestError",
    "ServerEvents",
    "SessionSettings",
    "is_openai_path",
    "parse_client_frame",
    "prompt_vocabulary",
]

RATE = 24_000
"""The only PCM rate the API allows (§5)."""

_INVALID_REQUEST = "invalid_request_error"
_SERVER_ERROR = "server_error"


class OpenAIRequestError(ProtocolError):
    """A client event the OpenAI dialect refuses: one ``error`` event in OpenAI's envelope (§6),
    naming the parameter at fault (``param``) where there is one."""

    def __init__(self, code: WireCode, message: str, param: str | None = None) -> None:
        super().__init__(code, message)
        self.param = param


def is_openai_path(path: str) -> bool:
    """Whether a ``/v1/realtime`` request path asks for an OpenAI transcription session.

    The official SDK connects with ``?intent=transcription`` (§1.1); the vLLM dialect sends no
    query, so that query parameter alone selects the dialect.
    """
    return "transcription" in parse_qs(urlsplit(path).query).get("intent", [])


@dataclass
class SessionSettings:
    """The effective transcription session; ``to_dict`` is what ``session.created/updated`` carry."""

    id: str
    model: str
    language: str | None = None
    prompt: str = ""
    turn_detection: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The GA ``RealtimeTranscriptionSessionCreateRequest`` shape (§4)."""
        return {
            "type": "transcription",
            "id": self.id,
            "object": "realtime.transcription_session",
            "audio": {
                "input": {
                    "format": {"type": "audio/pcm", "rate": RATE},
                    "transcription": {"model": self.model, "language": self.language, "prompt": self.prompt},
                    "noise_reduction": None,
                    "turn_detection": self.turn_detection,
                }
            },
            "include": None,
        }

    def update(self, session: Any) -> None:
        """Apply the fields a ``session.update`` gives; refuse what this server cannot do.

        Raises:
            OpenAIRequestError: a wrong session type, audio format or turn detection.
        """
        if not isinstance(session, dict):
            raise OpenAIRequestError(WireCode.INVALID_VALUE, "session must be an object", "session")
        if session.get("type", "transcription") != "transcription":
            raise OpenAIRequestError(
                WireCode.INVALID_VALUE,
                "Only transcription sessions are served here: session.type must be 'transcription'",
                "session.type",
            )
        audio_input = _object(session.get("audio", {}), "session.audio").get("input", {})
        audio_input = _object(audio_input, "session.audio.input")
        if "format" in audio_input:
            _check_format(audio_input["format"])
        if "turn_detection" in audio_input:
            self.turn_detection = _turn_detection(audio_input["turn_detection"])
        transcription = _object(audio_input.get("transcription", {}), "session.audio.input.transcription")
        if isinstance(transcription.get("model"), str):
            self.model = transcription["model"]
        if "language" in transcription:
            self.language = transcription["language"]
        if isinstance(transcription.get("prompt"), str):
            self.prompt = transcription["prompt"]


def prompt_vocabulary(prompt: str) -> tuple[str, ...]:
    """A transcription ``prompt``'s comma-, semicolon- or line-separated phrases, in order."""
    return tuple(phrase.strip() for phrase in re.split(r"[,;\n]", prompt) if phrase.strip())


def _turn_detection(value: Any) -> dict[str, Any] | None:
    """The effective ``turn_detection``: ``None`` (manual commits) or ``server_vad`` with defaults."""
    param = "session.audio.input.turn_detection"
    if value is None:
        return None
    value = _object(value, param)
    if value.get("type") != "server_vad":
        raise OpenAIRequestError(
            WireCode.UNSUPPORTED_TURN_DETECTION,
            "Only server_vad turn detection (or null) is supported",
            f"{param}.type",
        )
    settings = {"type": "server_vad", "threshold": 0.5, "prefix_padding_ms": 300, "silence_duration_ms": 500}
    for key, low, high in (
        ("threshold", 0.0, 1.0),
        ("prefix_padding_ms", 0, 10_000),
        ("silence_duration_ms", 0, 10_000),
    ):
        given = value.get(key, settings[key])
        if isinstance(given, bool) or not isinstance(given, int | float) or not low <= given <= high:
            raise OpenAIRequestError(
                WireCode.INVALID_VALUE, f"{key} must be a number from {low} to {high}", f"{param}.{key}"
            )
        settings[key] = given if key == "threshold" else int(given)
    return settings


def _object(value: Any, param: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise OpenAIRequestError(WireCode.INVALID_VALUE, f"{param} must be an object", param)
    return value


def _check_format(audio_format: Any) -> None:
    param = "session.audio.input.format"
    audio_format = _object(audio_format, param)
    if audio_format.get("type") != "audio/pcm" or audio_format.get("rate", RATE) != RATE:
        raise OpenAIRequestError(
            WireCode.UNSUPPORTED_AUDIO_FORMAT,
            f"Only audio/pcm at {RATE} Hz (PCM16 little-endian mono) is supported, got {json.dumps(audio_format)}",
            param,
        )


@dataclass(frozen=True)
class ClientFrame:
    """One client event: its ``type``, optional ``event_id`` and the whole object."""

    type: str
    event_id: str | None
    data: dict[str, Any]


def parse_client_frame(text: str | bytes) -> ClientFrame:
    """Parse one frame (binary frames carrying JSON are taken too, as the SDK's parser does, §7).

    Raises:
        OpenAIRequestError: not JSON, not an object, or no string ``type``.
    """
    try:
        data = loads(text)
    except ValueError:
        raise OpenAIRequestError(WireCode.INVALID_JSON, "The message is not valid JSON") from None
    if not isinstance(data, dict):
        raise OpenAIRequestError(WireCode.INVALID_JSON, "The message must be a JSON object")
    event_id = data.get("event_id")
    event_id = event_id if isinstance(event_id, str) else None
    kind = data.get("type")
    if not isinstance(kind, str):
        raise OpenAIRequestError(WireCode.MISSING_REQUIRED_PARAMETER, "Missing required parameter: 'type'.", "type")
    return ClientFrame(kind, event_id, data)


class ServerEvents:
    """Builds one connection's server events as JSON text, each with a fresh ``event_id``."""

    def __init__(self) -> None:
        self._prefix = secrets.token_hex(4)
        self._counter = itertools.count(1)

    def new_id(self, kind: str) -> str:
        """A connection-unique id such as ``item_1a2b3c4d_7``."""
        return f"{kind}_{self._prefix}_{next(self._counter)}"

    def event(self, kind: str, **fields: Any) -> str:
        """``{"type": kind, "event_id": …, **fields}`` as compact JSON."""
        return _ENCODER.encode({"type": kind, "event_id": self.new_id("event"), **fields})

    def error(self, code: WireCode, message: str, param: str | None = None, event_id: str | None = None) -> str:
        """An ``error`` event in OpenAI's envelope; engine failures are ``server_error`` (§6)."""
        kind = _SERVER_ERROR if code in _SERVER_CODES else _INVALID_REQUEST
        spelled = spell(code, Dialect.OPENAI)
        body = {"type": kind, "code": spelled, "message": message, "param": param, "event_id": event_id}
        return self.event("error", error=body)

    def failed(self, item_id: str, message: str) -> str:
        """``…transcription.failed`` for one item."""
        code = spell(WireCode.PROCESSING_ERROR, Dialect.OPENAI)
        error = {"type": _SERVER_ERROR, "code": code, "message": message, "param": None}
        return self.event(
            "conversation.item.input_audio_transcription.failed", item_id=item_id, content_index=0, error=error
        )


_SERVER_CODES = frozenset({WireCode.PROCESSING_ERROR, WireCode.SERVER_SHUTDOWN})
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
