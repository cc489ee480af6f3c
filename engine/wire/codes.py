"""The one set of ``error`` codes the wire cores send, and how each dialect spells them.

:class:`WireCode` names what went wrong, whatever the dialect; :func:`spell` gives the string a
dialect's clients read for it. Each dialect sends only its own codes (:data:`SENT`): vLLM's
seven and Voxdesk's three additions on ``/v1/realtime``, OpenAI's own where its API has one,
and Wyoming's (``server_busy`` among them). Where two dialects report the same failure they
spell it the same today, so a spelling is the code's value; the strings are what clients
match on and never change.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum, StrEnum

from voxdesk.engine.errors import VoxdeskError
from voxdesk.engine.events import StreamErrorCode

__all__ = ["SENT", "Dialect", "ProtocolError", "WireCode", "spell"]


class WireCode(StrEnum):
    """Why a server core answers ``error``; the value is its spelling on the wire.

    vLLM's seven and Voxdesk's three are the engine's own codes, by reference: a client engine
    reads each back as the :class:`~voxdesk.engine.events.StreamErrorCode` of the same value.
    """

    INVALID_JSON = StreamErrorCode.INVALID_JSON.value
    UNKNOWN_EVENT = StreamErrorCode.UNKNOWN_EVENT.value
    INVALID_EVENT = StreamErrorCode.INVALID_EVENT.value
    MODEL_NOT_FOUND = StreamErrorCode.MODEL_NOT_FOUND.value
    MODEL_NOT_VALIDATED = StreamErrorCode.MODEL_NOT_VALIDATED.value
    INVALID_AUDIO = StreamErrorCode.INVALID_AUDIO.value
    PROCESSING_ERROR = StreamErrorCode.PROCESSING_ERROR.value
    IDLE_TIMEOUT = StreamErrorCode.IDLE_TIMEOUT.value
    BUFFER_FULL = StreamErrorCode.BUFFER_FULL.value
    SERVER_SHUTDOWN = StreamErrorCode.SERVER_SHUTDOWN.value
    SERVER_BUSY = "server_busy"
    MISSING_REQUIRED_PARAMETER = "missing_required_parameter"
    INVALID_VALUE = "invalid_value"
    UNSUPPORTED_AUDIO_FORMAT = "unsupported_audio_format"
    UNSUPPORTED_TURN_DETECTION = "unsupported_turn_detection"
    INPUT_AUDIO_BUFFER_COMMIT_EMPTY = "input_audio_buffer_commit_empty"


class Dialect(Enum):
    """The wire dialects Voxdesk serves."""

    VLLM = "vllm"  # vLLM's /v1/realtime
    OPENAI = "openai"  # OpenAI Realtime transcription sessions
    WYOMING = "wyoming"  # Home Assistant's Wyoming speech-to-text


_EVERY_DIALECT = frozenset(
    {
        WireCode.INVALID_AUDIO,
        WireCode.PROCESSING_ERROR,
        WireCode.IDLE_TIMEOUT,
        WireCode.BUFFER_FULL,
        WireCode.SERVER_SHUTDOWN,
    }
)

SENT: Mapping[Dialect, frozenset[WireCode]] = {
    Dialect.VLLM: _EVERY_DIALECT
    | {
        WireCode.INVALID_JSON,
        WireCode.UNKNOWN_EVENT,
        WireCode.INVALID_EVENT,
        WireCode.MODEL_NOT_FOUND,
        WireCode.MODEL_NOT_VALIDATED,
    },
    Dialect.OPENAI: _EVERY_DIALECT
    | {
        WireCode.INVALID_JSON,
        WireCode.UNKNOWN_EVENT,
        WireCode.MISSING_REQUIRED_PARAMETER,
        WireCode.INVALID_VALUE,
        WireCode.UNSUPPORTED_AUDIO_FORMAT,
        WireCode.UNSUPPORTED_TURN_DETECTION,
        WireCode.INPUT_AUDIO_BUFFER_COMMIT_EMPTY,
    },
    Dialect.WYOMING: _EVERY_DIALECT | {WireCode.INVALID_EVENT, WireCode.SERVER_BUSY},
}
"""The codes each dialect sends; a client of that dialect knows no other."""


def spell(code: WireCode, dialect: Dialect) -> str:
    """``code`` as ``dialect`` writes it in an ``error``.

    Raises:
        ValueError: a code ``dialect`` never sends (its clients would not know it).
    """
    if code not in SENT[dialect]:
        raise ValueError(f"the {dialect.value} dialect has no error code for {code.name}")
    return code.value


class ProtocolError(VoxdeskError):
    """A peer's message broke the protocol; it becomes one ``error`` event with ``code``."""

    def __init__(self, code: WireCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
