"""The built-in engine on other Whisper models than tiny.en: random-weight models, so the
text is meaningless and only the mechanics are asserted (events, languages, errors)."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest

from tests.engine.wrapped_decoder import WrappedDecoder
from tests.random_whisper import random_whisper
from voxdesk.app.files.transcription import TranscriptionReport, transcribe_audio
from voxdesk.engine import ProvisionalText, TextDelta, UtteranceDone
from voxdesk.engine.errors import EngineUnavailable
from voxdesk.engine.whisper.builtin import BuiltinEngine, BuiltinSettings
from voxdesk.engine.whisper.decoder import DecoderSettings, Guess, WhisperDecoder

pytestmark = pytest.mark.integration  # loads Whisper models


def decoder(model: str, language: str = "auto", task: str = "transcribe") -> WhisperDecoder:
    return WhisperDecoder(DecoderSettings(model=model, device="cpu", language=language, task=task))


def test_a_random_model_folder_streams_partials_deltas_and_a_final(fixture_audio: dict[str, np.ndarray]) -> None:
    engine = BuiltinEngine(BuiltinSettings(decoder=DecoderSettings(model=str(random_whisper("base.en")), device="cpu")))
    steps: list[str] = []

    async def run() -> list[object]:
        await engine.load(lambda step, _: steps.append(step))
        try:
            report = await transcribe_audio(engine, fixture_audio["command01-slt"], realtime=False)
        finally:
            await engine.aclose()
        return [timed.event for timed in report.timeline]

    events = asyncio.run(run())
    assert any(isinstance(e, ProvisionalText | TextDelta) for e in events)
    finals = [e for e in events if isinstance(e, UtteranceDone)]
    assert len(finals) == 1
    assert finals[0].text  # random weights still emit tokens
    assert steps[-1] == f"ready: Whisper {random_whisper('base.en')}, cpu int8"


def test_english_only_models_refuse_other_languages() -> None:
    with pytest.raises(EngineUnavailable, match="English-only: --language de needs a multilingual model"):
        decoder("tiny.en", "de")
    with pytest.raises(EngineUnavailable, match="English-only"):
        decoder(str(random_whisper("small.en")), "fr")
    assert not decoder("tiny.en", "en").multilingual


def test_a_multilingual_model_takes_a_language_or_detects_one(fixture_audio: dict[str, np.ndarray]) -> None:
    multilingual = decoder(str(random_whisper("tiny")), "de")
    assert multilingual.multilingual
    audio = fixture_audio["command01-slt"]
    assert isinstance(multilingual.partial(audio, []).words, list)
    detecting = decoder(str(random_whisper("tiny")), "auto")
    assert all(isinstance(word, str) for word in detecting.final(audio, []))
    with pytest.raises(EngineUnavailable, match="does not know the language 'xx'"):
        decoder(str(random_whisper("tiny")), "xx")


def test_translate_needs_a_multilingual_model_and_puts_the_translate_token_in_the_prompt(
    fixture_audio: dict[str, np.ndarray],
) -> None:
    with pytest.raises(EngineUnavailable, match="English-only: --task translate needs a multilingual model"):
        decoder("tiny.en", task="translate")
    translating = decoder(str(random_whisper("tiny")), "de", task="translate")
    tokenizer = translating._tokenizer
    assert tokenizer.sot_sequence[-1] == tokenizer.tokenizer.token_to_id("<|translate|>")
    assert isinstance(translating.final(fixture_audio["command01-slt"], []), list)


class LanguageSpy(WrappedDecoder):
    """A decoder that records the language each call was given, and each detection."""

    def __init__(self, decoder: WhisperDecoder) -> None:
        super().__init__(decoder)
        self.detected: list[str] = []
        self.given: list[str | None] = []

    def detect_language(self, audio: np.ndarray) -> str:
        self.detected.append(self._decoder.detect_language(audio))
        return self.detected[-1]

    def partial(self, audio: np.ndarray, committed: list[str], language: str | None = None, *rest: Any) -> Guess:
        self.given.append(language)
        return self._decoder.partial(audio, committed, language, *rest)

    def final(self, audio: np.ndarray, committed: list[str], language: str | None = None, *rest: Any) -> list[str]:
        self.given.append(language)
        return self._decoder.final(audio, committed, language, *rest)


def test_auto_detects_each_utterance_language_once_and_keeps_it(fixture_audio: dict[str, np.ndarray]) -> None:
    whisper = DecoderSettings(model=str(random_whisper("tiny")), device="cpu", language="auto")
    engine = BuiltinEngine(BuiltinSettings(decoder=whisper))

    async def run() -> tuple[LanguageSpy, TranscriptionReport]:
        await engine.load()
        assert isinstance(engine, BuiltinEngine) and engine._decoder is not None
        spy = LanguageSpy(engine._decoder)
        engine._decoder = spy  # type: ignore[assignment]
        try:
            report = await transcribe_audio(engine, fixture_audio["command01-slt"], realtime=False)
        finally:
            await engine.aclose()
        return spy, report

    spy, report = asyncio.run(run())
    (language,) = spy.detected  # one utterance, one detection
    assert spy.given[-1] == language  # the final decodes in it
    assert [u.done.language for u in report.utterances] == [language]  # and says so
    assert set(spy.given) <= {None, language}  # before its first second, decodes detect their own


def test_batched_decoding_keeps_the_engines_language_and_task(fixture_audio: dict[str, np.ndarray]) -> None:
    settings = DecoderSettings(model=str(random_whisper("tiny")), device="cpu", language="de", task="translate")
    engine = BuiltinEngine(BuiltinSettings(decoder=settings))
    asyncio.run(engine.load())
    transcriber = engine.batch_transcriber()
    assert transcriber.task == "translate"
    utterances = list(transcriber.utterances(fixture_audio["command01-slt"]))
    assert utterances and {u.language for u in utterances} == {"de"}
    asyncio.run(engine.aclose())
