"""Remembering when each part of an audio stream was handed to an engine, to measure latency."""

from __future__ import annotations

import bisect

from voxdesk.engine.session import SAMPLE_RATE

__all__ = ["DeliveryClock"]


class DeliveryClock:
    """Wall-clock times (``time.perf_counter``) at which stream positions were handed over."""

    def __init__(self) -> None:
        self._ends: list[int] = []
        self._times: list[float] = []

    def record(self, end_sample: int, wall_time: float) -> None:
        """Note that audio up to ``end_sample`` was delivered at ``wall_time``."""
        self._ends.append(end_sample)
        self._times.append(wall_time)

    def delivered_at(self, audio_time: float) -> float:
        """When the audio at ``audio_time`` seconds had been delivered (the last time if never)."""
        if not self._times:
            raise ValueError("nothing was delivered yet")
        index = bisect.bisect_left(self._ends, round(audio_time * SAMPLE_RATE))
        return self._times[min(index, len(self._times) - 1)]

    def forget_before(self, audio_time: float) -> None:
        """Drop what was delivered before ``audio_time`` seconds, once no latency is measured
        from there any more: a listening session records 50 positions a second for hours."""
        index = bisect.bisect_left(self._ends, round(audio_time * SAMPLE_RATE))
        del self._ends[:index], self._times[:index]
