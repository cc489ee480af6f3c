"""What the controller tells its listeners (the window, the history, the actions)."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from voxdesk.app.listening.capture import AudioLevel, CaptureStatus
from voxdesk.app.listening.transcript import Utterance

__all__ = [
    "ControllerEvent",
    "EngineState",
    "EngineStatus",
    "ListeningChanged",
    "Problem",
    "TranscriptChanged",
    "UtteranceFinal",
]


class EngineState(enum.Enum):
    NONE = "none"
    LOADING = "loading"
    READY = "ready"
    RECONNECTING = "reconnecting"
    FAILED = "failed"


@dataclass(frozen=True)
class EngineStatus:
    state: EngineState
    engine: str  # which engine, in words: "built-in CPU engine", "remote: ws://…"
    detail: str = ""  # loading step, or the error in plain words
    progress: float | None = None  # 0 to 1 while loading


@dataclass(frozen=True)
class ListeningChanged:
    listening: bool
    hold_to_talk: bool = False


@dataclass(frozen=True)
class TranscriptChanged:
    """An utterance's text changed (committed, provisional or final); a copy."""

    utterance: Utterance


@dataclass(frozen=True)
class UtteranceFinal:
    """An utterance got its final text and latencies; a copy."""

    utterance: Utterance


@dataclass(frozen=True)
class Problem:
    """Something the user should read, in plain words."""

    message: str


ControllerEvent = (
    EngineStatus | ListeningChanged | TranscriptChanged | UtteranceFinal | Problem | AudioLevel | CaptureStatus
)
