"""A long utterance's partials decode a window that starts after settled words, not the whole
utterance: the real engine and Whisper on a virtual clock (:mod:`tests.engine.lockstep`), so
audio arrives as it would live whatever this machine's load."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np

from tests.engine.lockstep import CostedDecoder, Lockstep
from tests.recognition import ACCURACY, wer
from tests.speech_fixtures import Fixture
from voxdesk.app.files.transcription import TranscriptionReport
from voxdesk.engine.session import SAMPLE_RATE
from voxdesk.engine.whisper.builtin import BuiltinSettings
from voxdesk.engine.whisper.decoder import Guess, WhisperDecoder


class DecodedLengths(CostedDecoder):
    """The real decoder, noting how many seconds of audio each partial decodes."""

    def __init__(self, decoder: WhisperDecoder, lockstep: Lockstep) -> None:
        super().__init__(decoder, lockstep)
        self.seconds: list[float] = []

    def partial(self, audio: np.ndarray, *rest: Any) -> Guess:
        self.seconds.append(len(audio) / SAMPLE_RATE)
        return super().partial(audio, *rest)


def _stream(settings: BuiltinSettings, audio: np.ndarray) -> tuple[TranscriptionReport, list[float]]:
    lockstep = Lockstep()

    async def run() -> tuple[TranscriptionReport, list[float]]:
        engine = lockstep.engine(settings, wrap=DecodedLengths)
        spy = engine._decoder
        assert isinstance(spy, DecodedLengths)
        try:
            return await lockstep.transcribe(engine, audio), spy.seconds
        finally:
            await engine.aclose()

    return asyncio.run(lockstep.run(run()))


def test_partials_of_continuous_dictation_stay_short_and_the_text_stays_right(
    speech: dict[str, Fixture], fixture_audio: dict[str, np.ndarray]
) -> None:
    audio = fixture_audio["passage-slt"][: 14 * SAMPLE_RATE]  # 13.5 s of speech before the 8 s rule can cut it
    window = BuiltinSettings(window_seconds=3.0, window_keep_seconds=1.5)
    report, seconds = _stream(window, audio)
    longest = max(u.done.stats.audio_seconds for u in report.utterances)
    assert longest > 6.0, "the test needs an utterance well past the window"
    assert max(seconds) < longest - 2.0, seconds  # later partials decoded a trimmed window
    reference = " ".join(speech["passage-slt"].text.split()[: len(report.text.split())])
    assert wer([reference], [report.text]) <= ACCURACY["passage-slt"].max_wer, report.text
