"""Test doubles for Voxdesk's engines, shipped in the package (like ``trio.testing``).

Each one is a FAKE, named as such: it follows the :class:`~voxdesk.engine.session.StreamingEngine`
contract without recognizing speech, for tests and benchmarks of what sits around an engine
(the server, the remote client) at a scale a real engine cannot run at on a small machine.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator

import numpy as np

from voxdesk.engine.events import EngineEvent, TextDelta, UtteranceDone
from voxdesk.engine.session import SAMPLE_RATE, ProgressCallback, check_chunk

__all__ = ["TICK_SAMPLES", "FakeTickEngine"]

TICK_SAMPLES = 1280
"""Samples of audio per ``"tick "`` delta of :class:`FakeTickEngine`: 80 ms, Voxtral's rate."""


class FakeTickEngine:
    """FAKE engine with no recognition: one ``"tick "`` delta per 80 ms of audio.

    Stands in for a speech engine only where the test is about the server carrying many
    sessions (load, faults); Whisper on two cores cannot run 50 real-time sessions.
    """

    name = "fake-tick"
    detects_speech = False

    async def load(self, progress: ProgressCallback | None = None) -> None:
        """Nothing to load."""

    def stream(self, audio: AsyncIterable[np.ndarray]) -> AsyncIterator[EngineEvent]:
        """Count audio and emit a delta per 80 ms of it, then one ``UtteranceDone``."""
        return self._run(audio)

    async def _run(self, audio: AsyncIterable[np.ndarray]) -> AsyncIterator[EngineEvent]:
        samples = ticks = 0
        async for chunk in audio:
            samples += len(check_chunk(chunk))
            while (ticks + 1) * TICK_SAMPLES <= samples:
                ticks += 1
                yield TextDelta("tick ", ticks * TICK_SAMPLES / SAMPLE_RATE)
        yield UtteranceDone("tick " * ticks, samples / SAMPLE_RATE, 0.0, samples / SAMPLE_RATE)

    async def aclose(self) -> None:
        """Nothing to release."""
