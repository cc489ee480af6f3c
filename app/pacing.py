"""Feeding recorded audio to an engine as if it were live, and remembering when each part went in."""

from __future__ import annotations

import asyncio
import bisect
import time
from collections.abc import AsyncIterator

import numpy as np

from engine.session import SAMPLE_RATE

__all__ = ["DeliveryClock", "paced_chunks"]


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


async def paced_chunks(
    audio: np.ndarray,
    clock: DeliveryClock,
    chunk_seconds: float = 0.1,
    realtime: bool = True,
) -> AsyncIterator[np.ndarray]:
    """Yield ``audio`` in chunks, each no earlier than its end would be heard live.

    With ``realtime=False`` chunks go out as fast as the consumer takes them.
    """
    step = max(1, int(chunk_seconds * SAMPLE_RATE))
    start = time.perf_counter()
    for begin in range(0, len(audio), step):
        end = min(begin + step, len(audio))
        if realtime:
            await asyncio.sleep(max(0.0, start + end / SAMPLE_RATE - time.perf_counter()))
        else:
            await asyncio.sleep(0)  # let decodes that finished hand over their results
        clock.record(end, time.perf_counter())
        yield audio[begin:end]
