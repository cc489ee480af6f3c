"""Voxdesk speech engines and the streaming-session interface they share.

Importing this package loads no model and needs neither vllm nor torch; see
:mod:`voxdesk.engine.session` for the contract every engine follows.
"""

from __future__ import annotations

from typing import Any

from voxdesk.engine.errors import AudioBufferFull, AudioFormatError, EngineUnavailable, VoxdeskError
from voxdesk.engine.events import EngineEvent, ProvisionalText, StreamError, TextDelta, UtteranceDone, UtteranceStats
from voxdesk.engine.session import SAMPLE_RATE, AudioFeed, StreamingEngine, check_chunk

__all__ = [
    "ENGINE_NAMES",
    "SAMPLE_RATE",
    "AudioBufferFull",
    "AudioFeed",
    "AudioFormatError",
    "EngineEvent",
    "EngineUnavailable",
    "ProvisionalText",
    "StreamError",
    "StreamingEngine",
    "TextDelta",
    "UtteranceDone",
    "UtteranceStats",
    "VoxdeskError",
    "check_chunk",
    "create_engine",
]

ENGINE_NAMES = ("builtin", "vllm")
"""Engines ``create_engine`` knows, the default first."""


def create_engine(name: str = "builtin", **options: Any) -> StreamingEngine:
    """A new, not yet loaded engine by name; ``options`` go to the vLLM engine's settings.

    Raises:
        ValueError: an unknown name.
    """
    if name == "builtin":
        from voxdesk.engine.builtin import BuiltinEngine

        return BuiltinEngine()
    if name == "vllm":
        from voxdesk.engine.vllm_engine import VllmEngine, VllmSettings

        return VllmEngine(VllmSettings(**options))
    raise ValueError(f"unknown engine {name!r}; choose one of: {', '.join(ENGINE_NAMES)}")
