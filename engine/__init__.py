"""Voxdesk speech engines and the streaming-session interface they share.

Importing this package loads no model and needs neither vllm nor torch; see
:mod:`voxdesk.engine.session` for the contract every engine follows. The engines live in
:mod:`.whisper` (the built-in one), :mod:`.vllm` and :mod:`.remote` (clients of a server of each
dialect); :mod:`.wire` holds the dialects' protocol cores, :mod:`.audio` voice-activity detection.
"""

from __future__ import annotations

from voxdesk.engine.errors import AudioBufferFull, AudioFormatError, EngineUnavailable, VoxdeskError
from voxdesk.engine.events import (
    EngineEvent,
    ProvisionalText,
    StreamError,
    StreamErrorCode,
    TextDelta,
    TextRetracted,
    UtteranceDone,
    UtteranceStats,
)
from voxdesk.engine.kinds import EngineKind
from voxdesk.engine.session import SAMPLE_RATE, AudioFeed, StreamingEngine, check_chunk

__all__ = [
    "SAMPLE_RATE",
    "AudioBufferFull",
    "AudioFeed",
    "AudioFormatError",
    "EngineEvent",
    "EngineKind",
    "EngineUnavailable",
    "ProvisionalText",
    "StreamError",
    "StreamErrorCode",
    "StreamingEngine",
    "TextDelta",
    "TextRetracted",
    "UtteranceDone",
    "UtteranceStats",
    "VoxdeskError",
    "check_chunk",
]
