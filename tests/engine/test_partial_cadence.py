"""Partials keep pace with the decoder: a slow model's do not queue behind the microphone, and
until words show each follows the last as soon as it is done."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

import numpy as np

from tests.engine.wrapped_decoder import WrappedDecoder
from tests.recognition import assert_recognized
from tests.speech_fixtures import Fixture
from voxdesk.app.files.transcription import TranscriptionReport, transcribe_audio
from voxdesk.engine.whisper.builtin import BuiltinEngine, BuiltinSettings
from voxdesk.engine.whisper.decoder import Guess, WhisperDecoder

SLOWDOWN_S = 0.4  # added to every partial: 0.45 s a partial, about five times tiny.en's


class SlowPartials(WrappedDecoder):
    """A decoder whose partials take ``SLOWDOWN_S`` longer, as a bigger model's would."""

    def partial(self, audio: np.ndarray, committed: list[str], *rest: Any) -> Guess:
        time.sleep(SLOWDOWN_S)
        return self._decoder.partial(audio, committed, *rest)


def test_slow_partials_stretch_the_interval_and_the_final_still_comes(
    speech: dict[str, Fixture], fixture_audio: dict[str, np.ndarray]
) -> None:
    fixture = speech["command13-slt"]  # 3.4 s: at the fixed 0.6 s cadence about five partials

    async def run() -> TranscriptionReport:
        engine = BuiltinEngine()
        await engine.load()
        assert engine._decoder is not None
        engine._decoder = SlowPartials(engine._decoder)  # type: ignore[assignment]
        try:
            return await transcribe_audio(engine, fixture_audio[fixture.name], realtime=True)
        finally:
            await engine.aclose()

    (utterance,) = asyncio.run(run()).utterances
    done = utterance.done
    assert_recognized(fixture, done.text)
    assert done.stats.partial_decodes is not None
    assert 1 <= done.stats.partial_decodes <= (done.speech_end - done.speech_start) / (2 * SLOWDOWN_S) + 1
    assert utterance.first_text_latency is not None and utterance.first_text_latency < 1.5
    assert utterance.final_latency is not None and utterance.final_latency <= 1.5


GATE_TIMEOUT_S = 2.0
FIRST_TEXT_INTERVAL_S = BuiltinSettings().first_text_interval
CHUNK = 1600  # 0.1 s


class GatedFirstText(WrappedDecoder):
    """A decoder whose partials show no words and last longer than one chunk: each lets exactly
    one more chunk in (``permits``) and returns once the session has taken it in."""

    def __init__(self, decoder: WhisperDecoder, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(decoder)
        self._loop = loop
        self.permits: asyncio.Queue[None] = asyncio.Queue()
        self.taken_in = threading.Event()
        self.partial_lengths: list[int] = []

    def partial(self, audio: np.ndarray, committed: list[str], *rest: Any) -> Guess:
        self.partial_lengths.append(len(audio))
        self.taken_in.clear()
        self._loop.call_soon_threadsafe(self.permits.put_nowait, None)
        self.taken_in.wait(timeout=GATE_TIMEOUT_S)
        time.sleep(1.5 * FIRST_TEXT_INTERVAL_S)  # a decode slower than the first-text cadence
        return Guess([], 0.0, [])


def test_until_words_show_a_partial_starts_as_soon_as_the_last_is_done(
    speech: dict[str, Fixture], fixture_audio: dict[str, np.ndarray]
) -> None:
    """A first-text partial slower than the cadence is followed at once by the next, over the
    one chunk that came in meanwhile, not after a further chunk (which, with 100 ms chunks,
    delayed first text by up to 0.1 s)."""
    audio = fixture_audio[speech["command13-slt"].name]

    async def run() -> list[int]:
        engine = BuiltinEngine()
        await engine.load()
        assert engine._decoder is not None
        gated = GatedFirstText(engine._decoder, asyncio.get_running_loop())
        engine._decoder = gated  # type: ignore[assignment]

        async def chunks() -> AsyncIterator[np.ndarray]:
            for end in range(CHUNK, len(audio) + 1, CHUNK):
                if gated.partial_lengths and len(gated.partial_lengths) < 4:
                    # No permit within the timeout: the session did not start the next partial at once.
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(gated.permits.get(), GATE_TIMEOUT_S)
                yield audio[end - CHUNK : end]
                gated.taken_in.set()

        try:
            async for _ in engine.stream(chunks()):
                pass
        finally:
            await engine.aclose()
        return gated.partial_lengths

    lengths = asyncio.run(run())
    assert len(lengths) >= 4, lengths
    # From the second partial on: the first may start before the gate closes and miss a chunk.
    assert [b - a for a, b in itertools.pairwise(lengths[1:4])] == [CHUNK, CHUNK], lengths
