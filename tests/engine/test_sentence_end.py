"""The pause after a finished sentence ends an utterance sooner than the configured silence.

The streams run the real engine and Whisper on a virtual clock (:mod:`tests.engine.lockstep`):
audio arrives as it would live and each decode takes the time it is charged, whatever this
machine's load.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

import numpy as np
import pytest

from tests.engine.lockstep import Lockstep
from tests.recognition import assert_recognized
from tests.speech_fixtures import Fixture
from voxdesk.engine.audio.endpoint import Endpointer, EndpointSettings, SpeechEnded, SpeechStarted
from voxdesk.engine.whisper.builtin import BuiltinSettings, ends_a_sentence

SILENCE = 5.0
"""A configured end-of-speech silence far longer than the finished-sentence rule needs, so
the test does not depend on how fast this machine decodes."""


def test_what_ends_a_sentence() -> None:
    assert ends_a_sentence(["What", "time", "is", "it?"])
    assert ends_a_sentence(["Open", "the", "browser."]) and ends_a_sentence(["Stop!"])
    assert not ends_a_sentence(["Open", "the"]) and not ends_a_sentence([])
    assert not ends_a_sentence(["Search", "for", "the."])  # a pause for thought, not an end
    assert not ends_a_sentence(["Send", "it", "to", "And."])


def test_the_endpointer_ends_speech_when_told_and_hears_the_next_onset() -> None:
    endpointer = Endpointer(EndpointSettings(onset_seconds=0.064, silence_seconds=SILENCE))
    voiced, silent = np.full(10, 0.9), np.full(10, 0.1)
    assert [type(p) for p in endpointer.process(voiced)] == [SpeechStarted]
    assert endpointer.process(silent) == [] and endpointer.in_speech
    ended = endpointer.end_speech()
    assert isinstance(ended, SpeechEnded) and ended.sample == endpointer.last_voiced_end
    assert not endpointer.in_speech and endpointer.process(silent) == []
    assert [type(p) for p in endpointer.process(voiced)] == [SpeechStarted]


def _waited(
    rule: bool, fixture: Fixture, audio: np.ndarray, settings: BuiltinSettings | None = None
) -> tuple[str, float]:
    """Stream the fixture and 5.5 s of silence at real-time pace through an engine with
    ``settings``; its text and the silence heard before its end."""
    endpoint = EndpointSettings(silence_seconds=SILENCE)
    lockstep = Lockstep()

    async def run() -> tuple[str, float]:
        engine = lockstep.engine(
            replace(settings or BuiltinSettings(), endpoint=endpoint, end_at_finished_sentence=rule)
        )
        try:
            padded = np.concatenate([audio, np.zeros(int((SILENCE + 0.5) * 16_000), np.float32)])
            report = await lockstep.transcribe(engine, padded)
        finally:
            await engine.aclose()
        (utterance,) = report.utterances
        return utterance.done.text, utterance.done.audio_time - fixture.speech[-1][1]

    return asyncio.run(lockstep.run(run()))


@pytest.mark.parametrize("name", ["command00-slt", "command01-slt"])
def test_a_finished_sentence_ends_the_utterance_at_the_speculative_final(
    name: str, speech: dict[str, Fixture], fixture_audio: dict[str, np.ndarray]
) -> None:
    text, waited = _waited(True, speech[name], fixture_audio[name])
    assert_recognized(speech[name], text)
    assert waited < SILENCE - 1.0, f"{text!r} ended {waited:.2f} s after the speech"


def test_without_the_rule_the_configured_silence_ends_it(
    speech: dict[str, Fixture], fixture_audio: dict[str, np.ndarray]
) -> None:
    fixture = speech["command00-slt"]
    text, waited = _waited(False, fixture, fixture_audio[fixture.name])
    assert_recognized(fixture, text)
    assert waited >= SILENCE


def test_the_rule_is_on_by_default() -> None:
    assert BuiltinSettings().end_at_finished_sentence
    assert replace(BuiltinSettings(), end_at_finished_sentence=False) != BuiltinSettings()


EARLY_FINAL = 3.0
"""A pause before the speculative final far longer than the shorter one after a finished
sentence, so which one started the final shows in when the utterance ended, not in how fast
this machine decodes."""


def test_shown_text_that_ends_a_sentence_starts_the_final_after_a_shorter_pause(
    speech: dict[str, Fixture], fixture_audio: dict[str, np.ndarray]
) -> None:
    fixture = speech["command00-slt"]
    audio = fixture_audio[fixture.name]
    text, waited = _waited(True, fixture, audio, BuiltinSettings(early_final_silence=EARLY_FINAL))
    assert_recognized(fixture, text)
    assert waited < EARLY_FINAL - 1.0, f"{text!r} ended {waited:.2f} s after the speech"
    both_long = BuiltinSettings(early_final_silence=EARLY_FINAL, early_final_after_sentence=EARLY_FINAL)
    text, waited = _waited(True, fixture, audio, both_long)
    assert_recognized(fixture, text)
    assert waited >= EARLY_FINAL
