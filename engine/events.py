"""Events a streaming session yields.

Every event carries ``audio_time``: the position in the session's audio stream, in seconds
from the first sample sent, that the event refers to. For text it is the end of the audio the
engine had decoded when it produced the text, so the caller can compare it with when that
audio was sent and compute latency. ``audio_time`` never decreases along one session.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

__all__ = [
    "EngineEvent",
    "EngineFault",
    "ProvisionalText",
    "StreamError",
    "StreamErrorCode",
    "TextDelta",
    "TextRetracted",
    "UtteranceDone",
    "UtteranceStats",
]


@dataclass(frozen=True)
class TextDelta:
    """Text the engine commits to: append-only, possibly ``""``; only a ``TextRetracted``
    withdraws it.

    All deltas of one utterance after its last ``TextRetracted``, concatenated in order, equal
    its ``UtteranceDone.text``.
    """

    text: str
    audio_time: float


@dataclass(frozen=True)
class ProvisionalText:
    """The engine's current guess at the text after the committed deltas.

    It replaces the previous provisional text of the same utterance; ``""`` clears it.
    """

    text: str
    audio_time: float


@dataclass(frozen=True)
class TextRetracted:
    """Everything shown for the utterance in progress is withdrawn: its committed deltas and
    its provisional text. Its audio is being transcribed again and new deltas follow.

    The remote engine sends it when it moves to another server in the middle of an utterance
    and replays the audio the lost server had not finalized.
    """

    audio_time: float


@dataclass(frozen=True)
class UtteranceStats:
    """What it took to transcribe one utterance."""

    audio_seconds: float
    decode_seconds: float | None  # None: the engine cannot tell (vLLM, remote servers)
    partial_decodes: int
    final_decode_seconds: float | None = None  # the one decode of the whole utterance that gave the final
    queue_seconds: float | None = None  # how long its decodes waited behind other sessions' (None: cannot tell)
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True)
class UtteranceDone:
    """End of one utterance: its full final text and where its speech was in the stream.

    ``speech_start``/``speech_end`` are the detected speech bounds (seconds from stream
    start); ``audio_time`` is how far into the stream the engine had read when it ended
    the utterance. The provisional text is cleared. ``language``: the Whisper language code
    it was decoded in, where the engine knows it.
    """

    text: str
    audio_time: float
    speech_start: float
    speech_end: float
    stats: UtteranceStats = field(
        default_factory=lambda: UtteranceStats(audio_seconds=0.0, decode_seconds=0.0, partial_decodes=0)
    )
    language: str | None = None


class StreamErrorCode(StrEnum):
    """Why a session failed: the ``/v1/realtime`` error codes, then the client's own.

    The values are the wire strings and may reach JSON output; never change them.
    """

    INVALID_JSON = "invalid_json"
    UNKNOWN_EVENT = "unknown_event"
    INVALID_EVENT = "invalid_event"
    MODEL_NOT_FOUND = "model_not_found"
    MODEL_NOT_VALIDATED = "model_not_validated"
    INVALID_AUDIO = "invalid_audio"
    PROCESSING_ERROR = "processing_error"
    IDLE_TIMEOUT = "idle_timeout"
    BUFFER_FULL = "buffer_full"
    SERVER_SHUTDOWN = "server_shutdown"
    CONNECTION_LOST = "connection_lost"  # the remote engine lost its server (retried unless fatal)
    UNAUTHORIZED = "unauthorized"  # the server refused the connection (HTTP 401/403 and the like)
    ERROR = "error"  # a server error without a code, or with one this list lacks


class EngineFault(StrEnum):
    """What a failure of the engine itself (not of the audio, the client or the wire) took down."""

    SESSION = "session"
    """This session only: the engine goes on serving the others and new ones."""
    ENGINE = "engine"
    """The whole engine (its process died, say): every session fails until it is restarted."""


@dataclass(frozen=True)
class StreamError:
    """Something went wrong inside the session; text already yielded stays valid.

    ``code`` is a short machine-readable reason (vLLM's error codes where one fits).
    ``message`` says what happened in one sentence a user can read.
    When ``fatal`` is true the session ends after this event. ``engine_fault`` is set when the
    engine itself failed, and says whether it failed this session only or for good.
    """

    code: StreamErrorCode
    message: str
    audio_time: float
    fatal: bool = True
    engine_fault: EngineFault | None = None

    @property
    def restart_helps(self) -> bool:
        """Whether restarting the engine can help: the engine failed, not the audio or the client."""
        return self.engine_fault is not None


EngineEvent = TextDelta | ProvisionalText | TextRetracted | UtteranceDone | StreamError
