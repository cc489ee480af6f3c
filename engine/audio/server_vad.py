"""OpenAI's ``server_vad`` turn detection over the session's 16 kHz audio; no I/O.

Silero VAD (:mod:`voxdesk.engine.audio.vad`) scores the audio and the :class:`Endpointer` finds where
speech starts and stops. Outside speech only ``prefix_padding_ms`` of audio is kept; when speech
starts, that padding and the speech after it go out as :class:`TurnAudio`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from voxdesk.engine.audio.vad import Endpointer, EndpointSettings, SpeechEnded, SpeechStarted
from voxdesk.engine.session import SAMPLE_RATE

__all__ = ["ServerVad", "TurnAudio", "TurnEvent", "TurnStarted", "TurnStopped"]

_NEVER_CUT = 24 * 3600.0  # OpenAI does not end long speech early: no shorter pause after long speech


@dataclass(frozen=True)
class TurnStarted:
    """Speech began; ``audio_start_ms`` counts from the session's first sample, padding included."""

    audio_start_ms: int


@dataclass(frozen=True)
class TurnAudio:
    """16 kHz audio of the current turn."""

    samples: np.ndarray


@dataclass(frozen=True)
class TurnStopped:
    """Speech ended at ``audio_end_ms``: the turn is to be committed."""

    audio_end_ms: int


TurnEvent = TurnStarted | TurnAudio | TurnStopped


class ServerVad:
    """Splits a stream into turns. ``probabilities`` scores 16 kHz audio per VAD window."""

    def __init__(
        self,
        probabilities: Callable[[np.ndarray], np.ndarray],
        threshold: float,
        prefix_padding_ms: int,
        silence_duration_ms: int,
    ) -> None:
        self._probabilities = probabilities
        settings = EndpointSettings(
            threshold=threshold, silence_seconds=silence_duration_ms / 1000, long_speech_seconds=_NEVER_CUT
        )
        self._endpointer = Endpointer(settings)
        self._prefix = prefix_padding_ms * SAMPLE_RATE // 1000
        self._position = 0  # samples seen
        self._recent = np.zeros(0, np.float32)  # audio outside speech, ending at _position

    @property
    def in_speech(self) -> bool:
        """Whether a turn is open."""
        return self._endpointer.in_speech

    def feed(self, samples: np.ndarray) -> list[TurnEvent]:
        """The turn events ``samples`` make, in order."""
        events: list[TurnEvent] = []
        if self.in_speech:
            events.append(TurnAudio(samples))
        else:
            self._recent = np.concatenate([self._recent, samples])
        self._position += len(samples)
        for point in self._endpointer.process(self._probabilities(samples)):
            if isinstance(point, SpeechStarted):
                start = max(0, point.sample - self._prefix, self._position - len(self._recent))
                events.append(TurnStarted(_ms(start)))
                events.append(TurnAudio(self._recent[start - (self._position - len(self._recent)) :]))
                self._recent = np.zeros(0, np.float32)
            elif isinstance(point, SpeechEnded):
                events.append(TurnStopped(_ms(point.sample)))
                self._recent = samples.copy()
        keep = self._prefix + len(samples)
        if not self.in_speech and len(self._recent) > keep:
            self._recent = self._recent[len(self._recent) - keep :]
        return events

    def end(self) -> TurnStopped | None:
        """End the open turn now (a manual commit), if one is open."""
        if not self.in_speech:
            return None
        return TurnStopped(_ms(self._endpointer.end_speech().sample))

    def drop(self) -> None:
        """Forget the kept padding (a clear)."""
        self._recent = np.zeros(0, np.float32)


def _ms(sample: int) -> int:
    return sample * 1000 // SAMPLE_RATE
