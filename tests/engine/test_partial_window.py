"""A long utterance's partials decode a window that starts after settled words, not the whole utterance."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np

from tests.engine.wrapped_decoder import WrappedDecoder
from tests.recognition import ACCURACY, wer
from tests.speech_fixtures import Fixture
from voxdesk.app.files.transcription import TranscriptionReport, transcribe_audio
from voxdesk.engine.session import SAMPLE_RATE
from voxdesk.engine.whisper.builtin import BuiltinEngine, BuiltinSettings
from voxdesk.engine.whisper.decoder import Guess, WhisperDecoder


class DecodedLengths(WrappedDecoder):
    """The real decoder, noting how many seconds of audio each partial decodes."""

    def __init__(self, decoder: WhisperDecoder) -> None:
        super().__init__(decoder)
        self.seconds: list[float] = []

    def partial(self, audio: np.ndarray, *rest: Any) -> Guess:
        self.seconds.append(len(audio) / SAMPLE_RATE)
        return self._decoder.partial(audio, *rest)


def _stream(settings: BuiltinSettings, audio: np.ndarray) -> tuple[TranscriptionReport, list[float]]:
    async def run() -> tuple[TranscriptionReport, list[float]]:
        engine = BuiltinEngine(settings)
        await engine.load()
        assert engine._decoder is not None
        spy = DecodedLengths(engine._decoder)
        engine._decoder = spy  # type: ignore[assignment]
        try:
            return await transcribe_audio(engine, audio, realtime=True), spy.seconds
        finally:
            await engine.aclose()

    return asyncio.run(run())


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
