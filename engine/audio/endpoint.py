"""Where speech starts and ends, from per-window speech probabilities; pure, no model.

The probabilities come one per :data:`VAD_WINDOW` samples, from the stream's first sample on
(as :class:`~voxdesk.engine.audio.silero.SileroVad` gives them).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from voxdesk.engine.session import SAMPLE_RATE

__all__ = ["VAD_WINDOW", "EndpointSettings", "Endpointer", "SpeechEnded", "SpeechStarted"]

VAD_WINDOW = 512
"""Samples per VAD decision (32 ms at 16 kHz)."""


@dataclass(frozen=True)
class EndpointSettings:
    """When speech starts and ends, from VAD probabilities.

    Speech starts after ``onset_seconds`` of windows at or above ``threshold`` and ends after
    ``silence_seconds`` of windows below ``threshold - 0.15``. Once speech has gone on for
    ``long_speech_seconds`` a shorter pause, ``long_speech_silence_seconds``, ends it: long
    dictation is cut at breaths between sentences instead of growing without end.
    """

    threshold: float = 0.5
    onset_seconds: float = 0.064
    silence_seconds: float = 0.6
    long_speech_seconds: float = 8.0
    long_speech_silence_seconds: float = 0.15


@dataclass(frozen=True)
class SpeechStarted:
    """Speech began at ``sample`` (from stream start)."""

    sample: int


@dataclass(frozen=True)
class SpeechEnded:
    """Speech that began earlier ended at ``sample``: the end of its last voiced window."""

    sample: int


class Endpointer:
    """Turns per-window speech probabilities into speech start and end points; no I/O."""

    def __init__(self, settings: EndpointSettings | None = None) -> None:
        self.settings = settings or EndpointSettings()
        self._onset_windows = max(1, round(self.settings.onset_seconds * SAMPLE_RATE / VAD_WINDOW))
        self._silence_windows = max(1, round(self.settings.silence_seconds * SAMPLE_RATE / VAD_WINDOW))
        self._long_windows = round(self.settings.long_speech_seconds * SAMPLE_RATE / VAD_WINDOW)
        self._long_silence_windows = max(1, round(self.settings.long_speech_silence_seconds * SAMPLE_RATE / VAD_WINDOW))
        self._window = 0
        self._speech_start_window = 0
        self._in_speech = False
        self._run = 0  # consecutive voiced windows (outside speech) or silent ones (inside)
        self._last_voiced_end = 0

    @property
    def in_speech(self) -> bool:
        """Whether the last window processed was inside speech."""
        return self._in_speech

    @property
    def onset_samples(self) -> int:
        """How far a start lies before the end of the window that confirms it."""
        return self._onset_windows * VAD_WINDOW

    @property
    def trailing_silence_seconds(self) -> float:
        """How long the current speech has been silent (0 outside speech)."""
        return self._run * VAD_WINDOW / SAMPLE_RATE if self._in_speech else 0.0

    @property
    def last_voiced_end(self) -> int:
        """Stream sample where the last voiced window of the current speech ended."""
        return self._last_voiced_end

    def end_speech(self) -> SpeechEnded:
        """End the current speech now, at its last voiced window: the caller judged the pause
        so far to be its end. Voiced windows after this start new speech."""
        self._in_speech, self._run = False, 0
        return SpeechEnded(self._last_voiced_end)

    def process(self, probabilities: np.ndarray) -> list[SpeechStarted | SpeechEnded]:
        """Consume the next windows' probabilities; return the start and end points they make."""
        points: list[SpeechStarted | SpeechEnded] = []
        low = self.settings.threshold - 0.15
        for p in probabilities:
            self._window += 1
            end = self._window * VAD_WINDOW
            if not self._in_speech:
                self._run = self._run + 1 if p >= self.settings.threshold else 0
                if self._run >= self._onset_windows:
                    self._in_speech, self._run, self._last_voiced_end = True, 0, end
                    self._speech_start_window = self._window - self._onset_windows
                    points.append(SpeechStarted(end - self._onset_windows * VAD_WINDOW))
            elif p < low:
                self._run += 1
                if self._run >= self._required_silence():
                    self._in_speech, self._run = False, 0
                    points.append(SpeechEnded(self._last_voiced_end))
            else:
                self._run, self._last_voiced_end = 0, end
        return points

    def _required_silence(self) -> int:
        """Windows of silence that end the current speech: fewer once it has gone on long."""
        voiced = self._last_voiced_end // VAD_WINDOW - self._speech_start_window
        return self._long_silence_windows if voiced >= self._long_windows else self._silence_windows
