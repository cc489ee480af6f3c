"""Feeding recorded audio to an engine as if it were live, and remembering when each part went in."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import numpy as np

from voxdesk.engine.clock import DeliveryClock
from voxdesk.engine.session import SAMPLE_RATE

__all__ = ["paced_chunks"]


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
