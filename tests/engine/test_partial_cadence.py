"""A slow model's partials do not queue behind the microphone: the cadence follows the decoder."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import numpy as np

from tests.recognition import assert_recognized
from tests.speech_fixtures import Fixture
from voxdesk.app.files.transcription import TranscriptionReport, transcribe_audio
from voxdesk.engine.builtin import BuiltinEngine
from voxdesk.engine.whisper_decoder import Guess, WhisperDecoder

SLOWDOWN_S = 0.4  # added to every partial: 0.45 s a partial, about five times tiny.en's


class SlowPartials:
    """A decoder whose partials take ``SLOWDOWN_S`` longer, as a bigger model's would."""

    def __init__(self, decoder: WhisperDecoder) -> None:
        self._decoder = decoder
        self.language = decoder.language
        self.final = decoder.final
        self.split = decoder.split

    def partial(self, audio: np.ndarray, committed: list[str], *rest: Any) -> Guess:
        time.sleep(SLOWDOWN_S)
        return self._decoder.partial(audio, committed, *rest)


def test_slow_partials_stretch_the_interval_and_the_final_still_comes(
    speech: dict[str, Fixture], fixture_audio: dict[str, np.ndarray]
) -> None:
    fixture = speech["command13-slt"]  # 3.4 s: at the fixed 0.5 s cadence about six partials

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
