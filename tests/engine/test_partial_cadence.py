"""Partials keep pace with the decoder: a slow model's do not queue behind the microphone, and
until words show each follows the last as soon as it is done.

Both run the real engine and Whisper on a virtual clock (:mod:`tests.engine.lockstep`): a
decode takes the time it is charged, whatever this machine's load, and audio arrives as it
would live on that clock.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from typing import Any

import numpy as np

from tests.engine.lockstep import CostedDecoder, Lockstep, first_of
from tests.recognition import assert_recognized
from tests.speech_fixtures import Fixture
from voxdesk.app.files.transcription import TranscriptionReport
from voxdesk.engine.whisper.builtin import BuiltinSettings
from voxdesk.engine.whisper.decoder import Guess, WhisperDecoder

SLOWDOWN_S = 0.4  # added to every partial: 0.45 s a partial, about five times tiny.en's


class SlowPartials(CostedDecoder):
    """A decoder whose partials take ``SLOWDOWN_S`` longer, as a bigger model's would."""

    def partial(self, audio: np.ndarray, committed: list[str], *rest: Any) -> Guess:
        self._queue.charge(SLOWDOWN_S)
        return super().partial(audio, committed, *rest)


def test_slow_partials_stretch_the_interval_and_the_final_still_comes(
    speech: dict[str, Fixture], fixture_audio: dict[str, np.ndarray]
) -> None:
    fixture = speech["command13-slt"]  # 3.4 s: at the fixed 0.6 s cadence about five partials
    lockstep = Lockstep()

    async def run() -> TranscriptionReport:
        engine = lockstep.engine(wrap=SlowPartials)
        try:
            return await lockstep.transcribe(engine, fixture_audio[fixture.name])
        finally:
            await engine.aclose()

    (utterance,) = asyncio.run(lockstep.run(run())).utterances
    done = utterance.done
    assert_recognized(fixture, done.text)
    assert done.stats.partial_decodes is not None
    assert 1 <= done.stats.partial_decodes <= (done.speech_end - done.speech_start) / (2 * SLOWDOWN_S) + 1
    assert utterance.first_text_latency is not None and utterance.first_text_latency < 1.5
    assert utterance.final_latency is not None and utterance.final_latency <= 1.5


FIRST_TEXT_INTERVAL_S = BuiltinSettings().first_text_interval
CHUNK = 1600  # 0.1 s


class GatedFirstText(CostedDecoder):
    """A decoder whose partials show no words and take longer than one chunk: each lets
    exactly one more chunk in (``permits``)."""

    def __init__(self, decoder: WhisperDecoder, lockstep: Lockstep) -> None:
        super().__init__(decoder, lockstep, {"partial": 1.5 * FIRST_TEXT_INTERVAL_S})  # slower than the cadence
        self._loop = asyncio.get_running_loop()
        self.permits: asyncio.Queue[None] = asyncio.Queue()
        self.partial_lengths: list[int] = []

    def partial(self, audio: np.ndarray, committed: list[str], *rest: Any) -> Guess:
        self._queue.charge(self.costs["partial"])
        self.partial_lengths.append(len(audio))
        self._loop.call_soon_threadsafe(self.permits.put_nowait, None)
        return Guess([], 0.0, [])


def test_until_words_show_a_partial_starts_as_soon_as_the_last_is_done(
    speech: dict[str, Fixture], fixture_audio: dict[str, np.ndarray]
) -> None:
    """A first-text partial slower than the cadence is followed at once by the next, over the
    one chunk that came in meanwhile, not after a further chunk (which, with 100 ms chunks,
    delayed first text by up to 0.1 s)."""
    audio = fixture_audio[speech["command13-slt"].name]
    lockstep = Lockstep()

    async def run() -> list[int]:
        engine = lockstep.engine(wrap=GatedFirstText)
        gated = engine._decoder
        assert isinstance(gated, GatedFirstText)

        async def chunks() -> AsyncIterator[np.ndarray]:
            for end in range(CHUNK, len(audio) + 1, CHUNK):
                if gated.partial_lengths and len(gated.partial_lengths) < 4:
                    # No permit before all else is over: the session did not start the next partial at once.
                    await first_of(gated.permits.get(), lockstep.quiet())
                else:
                    await lockstep.sleep_until(end / 16_000)
                yield audio[end - CHUNK : end]

        try:
            async for _ in engine.stream(chunks()):
                pass
        finally:
            await engine.aclose()
        return gated.partial_lengths

    lengths = asyncio.run(lockstep.run(run()))
    assert len(lengths) >= 4, lengths
    # From the second partial on: the first starts before the gate closes and misses a chunk.
    assert [b - a for a, b in itertools.pairwise(lengths[1:4])] == [CHUNK, CHUNK], lengths
