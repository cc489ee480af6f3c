"""In noise the built-in engine commits no partial text: the final decode decides every word."""

from __future__ import annotations

import asyncio
import itertools

import numpy as np
import pytest

from tests.recognition import noise_at
from voxdesk.app.files.transcription import TimedEvent, transcribe_audio
from voxdesk.engine.audio.noise_level import NoiseLevel
from voxdesk.engine.audio.silero import SileroVad
from voxdesk.engine.events import ProvisionalText, TextDelta
from voxdesk.engine.whisper.builtin import BuiltinEngine, BuiltinSettings

SECONDS = 10.0
"""The passage's first seconds: several partials that agree in clean speech, and little test time."""


@pytest.fixture
def passage(fixture_audio: dict[str, np.ndarray]) -> np.ndarray:
    return fixture_audio["passage-slt"][: int(SECONDS * 16_000)]


def _snr(audio: np.ndarray) -> float | None:
    vad, level = SileroVad(), NoiseLevel()
    for start in range(0, len(audio), 1600):
        chunk = audio[start : start + 1600]
        level.add(chunk, vad.probabilities(chunk))
    return level.snr_db


def test_the_noise_estimate_tells_10_db_from_25_db_and_clean(passage: np.ndarray) -> None:
    audio, limit = passage, BuiltinSettings().noisy_snr_db
    clean, quiet_noise, loud_noise = _snr(audio), _snr(noise_at(25.0)(audio)), _snr(noise_at(10.0)(audio))
    assert clean is not None and quiet_noise is not None and loud_noise is not None
    assert clean > 40.0 and quiet_noise > limit + 3.0 and loud_noise < limit - 3.0, (clean, quiet_noise, loud_noise)


def _partial_commits(timeline: list[TimedEvent]) -> int:
    """Committed text that came with a partial (a delta before provisional text), not with a final."""
    events = [timed.event for timed in timeline]
    return sum(isinstance(a, TextDelta) and isinstance(b, ProvisionalText) for a, b in itertools.pairwise(events))


@pytest.mark.parametrize(("noisy", "commits"), [(False, True), (True, False)], ids=["clean", "10 dB SNR"])
def test_partials_commit_words_in_clean_speech_and_none_in_noise(
    passage: np.ndarray, noisy: bool, commits: bool
) -> None:
    audio = noise_at(10.0)(passage) if noisy else passage

    async def run() -> int:
        engine = BuiltinEngine()
        await engine.load()
        try:
            report = await transcribe_audio(engine, audio, realtime=True)
        finally:
            await engine.aclose()
        assert report.text
        return _partial_commits(report.timeline)

    assert (asyncio.run(run()) > 0) is commits
