"""Voxdesk speech engines and the streaming-session interface they share.

Importing this package loads no model and needs neither vllm nor torch; see
:mod:`voxdesk.engine.session` for the contract every engine follows.
"""

from __future__ import annotations

from typing import Any

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
    "ENGINE_NAMES",
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
    "create_engine",
]

ENGINE_NAMES = (EngineKind.BUILTIN, EngineKind.VLLM)
"""Engines ``create_engine`` knows, the default first (the remote one needs its own settings)."""


def create_engine(name: EngineKind | str = EngineKind.BUILTIN, **options: Any) -> StreamingEngine:
    """A new, not yet loaded engine by kind; ``options`` go to its settings (the built-in
    engine's ``DecoderSettings``: model, device, language; the vLLM engine's ``VllmSettings``).

    Raises:
        ValueError: an unknown name.
    """
    if name == EngineKind.BUILTIN:
        from voxdesk.engine.whisper.builtin import BuiltinEngine, BuiltinSettings
        from voxdesk.engine.whisper.decoder import DecoderSettings

        return BuiltinEngine(BuiltinSettings(decoder=DecoderSettings(**options)))
    if name == EngineKind.VLLM:
        from voxdesk.engine.vllm.engine import VllmEngine, VllmSettings

        return VllmEngine(VllmSettings(**options))
    raise ValueError(f"unknown engine {str(name)!r}; choose one of: {', '.join(ENGINE_NAMES)}")
