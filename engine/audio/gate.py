"""The speech gate: 16 kHz audio in; speech starts, the audio of each turn and speech stops out.

A speech-probability function passed in (Silero VAD's
:meth:`~voxdesk.engine.audio.silero.SileroVad.probabilities` in use) scores the audio, the
:class:`~voxdesk.engine.audio.endpoint.Endpointer` finds where speech starts and stops, and
the gate holds the most recent audio so that each turn begins ``pre_roll_seconds`` before its
speech does: its first words are not clipped. Pure: no model, no I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from voxdesk.engine.audio.endpoint import Endpointer, EndpointSettings, SpeechStarted
from voxdesk.engine.session import SAMPLE_RATE

__all__ = ["GateAudio", "GateEvent", "GateStarted", "GateStopped", "Scorer", "SpeechGate"]

Scorer = Callable[[np.ndarray], np.ndarray]
"""Speech probabilities of the VAD windows that the next 16 kHz samples complete, one per
:data:`~voxdesk.engine.audio.endpoint.VAD_WINDOW` from the stream's first sample on."""


@dataclass(frozen=True)
class GateStarted:
    """Speech began at ``sample``; the turn's audio (pre-roll first) begins at ``audio_start``."""

    sample: int
    audio_start: int


@dataclass(frozen=True)
class GateAudio:
    """The next audio of the open turn, straight after the audio before it."""

    samples: np.ndarray


@dataclass(frozen=True)
class GateStopped:
    """Speech ended at ``sample``: the end of its last voiced window. The turn is over."""

    sample: int


GateEvent = GateStarted | GateAudio | GateStopped


class SpeechGate:
    """Splits one stream into turns of speech, each with ``pre_roll_seconds`` of audio before it.

    Positions are stream samples, counted from ``start`` (the stream sample of the first one fed).
    ``endpointer`` is readable for the state of the speech (in speech, trailing silence).
    """

    def __init__(self, scorer: Scorer, endpoint: EndpointSettings, pre_roll_seconds: float, start: int = 0) -> None:
        self.endpointer = Endpointer(endpoint)
        self.position = start
        """Stream sample just after the last one fed."""
        self._scorer = scorer
        self._start = start
        self._pre_roll = round(pre_roll_seconds * SAMPLE_RATE)
        # A start confirmed by the next chunk lies at most onset_samples before its first sample.
        self._hold = self._pre_roll + self.endpointer.onset_samples
        self._held = np.zeros(0, np.float32)  # the latest audio, ending at position

    def feed(self, samples: np.ndarray) -> list[GateEvent]:
        """The events ``samples`` make, in order: the chunk itself while a turn is open, and
        for each start its pre-roll and the audio after it up to the end of ``samples``."""
        events: list[GateEvent] = [GateAudio(samples)] if self.endpointer.in_speech else []
        self._held = np.concatenate([self._held, samples])
        self.position += len(samples)
        held_start = self.position - len(self._held)
        for point in self.endpointer.process(self._scorer(samples)):
            sample = self._start + point.sample
            if isinstance(point, SpeechStarted):
                audio_start = max(held_start, sample - self._pre_roll)
                events += [GateStarted(sample, audio_start), GateAudio(self._held[audio_start - held_start :])]
            else:
                events.append(GateStopped(sample))
        self._held = self._held[-self._hold :]
        return events

    def end(self) -> GateStopped | None:
        """End the open turn now, at its last voiced window (the caller judged the pause its
        end), if one is open; speech heard after this starts a new turn."""
        if not self.endpointer.in_speech:
            return None
        return GateStopped(self._start + self.endpointer.end_speech().sample)

    def drop(self) -> None:
        """Forget the audio held for pre-roll: the next turn's audio starts after this point."""
        self._held = np.zeros(0, np.float32)
