"""Whether the chosen speech model keeps up with this machine, from the utterances it finished.

A model is too slow when the median final latency of the last few utterances (text shown
after the speaker stopped) is over the limit. The message names the real-time factor
measured on the same utterances: seconds to decode each utterance once per second of its
audio, so 1.0 means the model only just keeps up with someone speaking without pause.
"""

from __future__ import annotations

import collections
import statistics
from dataclasses import dataclass

from voxdesk.engine.events import UtteranceStats

__all__ = ["FINAL_LATENCY_LIMIT", "SpeedVerdict", "SpeedWatch"]

FINAL_LATENCY_LIMIT = 1.5  # seconds after the end of speech that a final may take
WINDOW = 3  # utterances the verdict looks at
MIN_AUDIO_SECONDS = 0.5  # shorter utterances say little about decode speed


@dataclass(frozen=True)
class SpeedVerdict:
    """The model's measured speed: median final latency and real-time factor, and whether it is too slow."""

    final_latency: float
    real_time_factor: float
    too_slow: bool

    def message(self, model: str) -> str:
        """One plain sentence for the window."""
        if not self.too_slow:
            return f"{model} keeps up: real-time factor {self.real_time_factor:.2f}"
        return (
            f"{model} is too slow for this machine: text arrives {self.final_latency:.1f} s after you stop "
            f"(real-time factor {self.real_time_factor:.2f}, seconds of decoding per second of speech). "
            "A smaller model, or a GPU (device cuda), would keep up."
        )


class SpeedWatch:
    """Keeps the last utterances' final latency and decode speed; :meth:`add` gives a verdict
    once there are enough of them, and only when the verdict changed."""

    def __init__(self, limit: float = FINAL_LATENCY_LIMIT, window: int = WINDOW) -> None:
        self._limit = limit
        self._recent: collections.deque[tuple[float, float]] = collections.deque(maxlen=window)
        self._too_slow: bool | None = None

    def add(self, final_latency: float, stats: UtteranceStats) -> SpeedVerdict | None:
        """Take one finished utterance; a verdict when the model just became too slow or fast enough again."""
        if stats.final_decode_seconds is None or stats.audio_seconds < MIN_AUDIO_SECONDS:
            return None
        self._recent.append((final_latency, stats.final_decode_seconds / stats.audio_seconds))
        if len(self._recent) < (self._recent.maxlen or 1):
            return None
        latency = statistics.median(latency for latency, _ in self._recent)
        factor = statistics.median(factor for _, factor in self._recent)
        verdict = SpeedVerdict(latency, factor, latency > self._limit)
        if verdict.too_slow == self._too_slow:
            return None
        first, self._too_slow = self._too_slow is None, verdict.too_slow
        return None if first and not verdict.too_slow else verdict
