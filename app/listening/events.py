"""What the controller tells its listeners (the window, the history, the actions)."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from voxdesk.app.listening.capture import AudioLevel, CaptureStatus
from voxdesk.app.listening.transcript import Utterance
from voxdesk.engine.events import UtteranceStats

__all__ = [
    "AudioDropped",
    "Concern",
    "ControllerEvent",
    "EngineSpeed",
    "EngineState",
    "EngineStatus",
    "ListenTrigger",
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


class ListenTrigger(enum.Enum):
    """What started listening."""

    WINDOW = "window"  # the Listen button, an in-window shortcut, the tray
    GLOBAL_SHORTCUT = "global shortcut"  # the system-wide start/stop shortcut
    HOLD_TO_TALK = "hold to talk"


@dataclass(frozen=True)
class ListeningChanged:
    listening: bool
    hold_to_talk: bool = False
    trigger: ListenTrigger = ListenTrigger.WINDOW


@dataclass(frozen=True)
class TranscriptChanged:
    """An utterance's text changed (committed, provisional or final); a copy."""

    utterance: Utterance


@dataclass(frozen=True)
class UtteranceFinal:
    """An utterance got its final text and latencies; a copy, and what decoding it took."""

    utterance: Utterance
    stats: UtteranceStats | None = None


@dataclass(frozen=True)
class EngineSpeed:
    """The engine's model became too slow for this machine, or fast enough again."""

    too_slow: bool
    message: str
    real_time_factor: float


@dataclass(frozen=True)
class AudioDropped:
    """The engine fell so far behind the microphone that the oldest audio waiting for it was
    dropped; ``seconds`` is how much in all since listening started."""

    seconds: float

    @property
    def message(self) -> str:
        """The drop in plain words."""
        return f"dropped {self.seconds:.1f} s of audio: the engine could not keep up"


class Concern(enum.Enum):
    """What a problem is about: a good outcome of the same concern (the engine ready, the
    microphone open) ends it; any other (a file, the history, an action) stays until the next."""

    ENGINE = "engine"
    MICROPHONE = "microphone"
    OTHER = "other"


@dataclass(frozen=True)
class Problem:
    """Something the user should read, in plain words; ``offers_restart``: the engine failed,
    and restarting it (:meth:`~voxdesk.app.listening.controller.Controller.restart_engine`) can help."""

    message: str
    offers_restart: bool = False
    concern: Concern = Concern.OTHER


ControllerEvent = (
    EngineStatus
    | EngineSpeed
    | ListeningChanged
    | TranscriptChanged
    | UtteranceFinal
    | Problem
    | AudioDropped
    | AudioLevel
    | CaptureStatus
)
