"""A FAKE engine that falls behind on demand: :class:`~voxdesk.engine.testing.FakeTickEngine`
whose reading waits until the test releases it, as an engine busy decoding stops reading."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, AsyncIterator

import numpy as np

from voxdesk.engine.events import EngineEvent
from voxdesk.engine.session import AudioFeed
from voxdesk.engine.testing import FakeTickEngine


class FakeHeldEngine(FakeTickEngine):
    """FAKE engine: no recognition, one ``"tick "`` per 80 ms of audio, and no audio read at all
    until :attr:`release` is set. It says it finds utterances itself, so a listening session
    gives it one continuous stream (no speech gate between the microphone and its feed)."""

    name = "fake-held"
    detects_speech = True

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.feeds: list[AudioFeed] = []  # the feed of every stream, in order
        self.heard: list[np.ndarray] = []  # every chunk read, in order
        self._heard_more = asyncio.Event()

    def stream(self, audio: AsyncIterable[np.ndarray]) -> AsyncIterator[EngineEvent]:
        """Wait for :attr:`release`, then tick over ``audio`` like ``FakeTickEngine``."""
        if isinstance(audio, AudioFeed):
            self.feeds.append(audio)
        return super().stream(self._held(audio))

    @property
    def heard_samples(self) -> int:
        return sum(len(chunk) for chunk in self.heard)

    async def until_heard(self, samples: int) -> None:
        """Return once at least ``samples`` of audio were read."""
        while self.heard_samples < samples:
            self._heard_more.clear()
            await self._heard_more.wait()

    async def _held(self, audio: AsyncIterable[np.ndarray]) -> AsyncIterator[np.ndarray]:
        await self.release.wait()
        async for chunk in audio:
            self.heard.append(chunk)
            self._heard_more.set()
            yield chunk
