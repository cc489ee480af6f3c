"""The batched whole-file path: utterances cut from timed words, and its accuracy against streaming."""

from __future__ import annotations

import numpy as np

from tests.recognition import ACCURACY, assert_reaches_end, wer, words
from tests.speech_fixtures import Fixture
from voxdesk.app.files.transcription import TranscriptionReport
from voxdesk.engine.whisper.batch import BatchSettings, TimedWord, group_words
from voxdesk.engine.whisper.builtin import BuiltinEngine


def timed(*spans: tuple[str, float, float]) -> list[TimedWord]:
    return [TimedWord(text, start, end) for text, start, end in spans]


def test_a_pause_ends_an_utterance() -> None:
    groups = group_words(timed(("Open", 0.0, 0.3), ("it.", 0.4, 0.6), ("Then", 1.3, 1.5)), BatchSettings())
    assert [g.text for g in groups] == ["Open it.", "Then"]
    assert (groups[0].start, groups[0].end) == (0.0, 0.6)


def test_an_overlong_utterance_is_cut_after_its_last_sentence() -> None:
    settings = BatchSettings(max_utterance_seconds=2.0)
    spans = timed(("One.", 0.0, 0.5), ("Two", 0.6, 1.0), ("three.", 1.1, 1.6), ("Four", 1.7, 2.2), ("five", 2.3, 2.6))
    assert [g.text for g in group_words(spans, settings)] == ["One. Two three.", "Four five"]


def test_without_a_sentence_end_an_overlong_utterance_is_cut_at_a_word() -> None:
    settings = BatchSettings(max_utterance_seconds=1.0)
    spans = timed(("a", 0.0, 0.4), ("b", 0.5, 0.9), ("c", 1.0, 1.4))
    assert [g.text for g in group_words(spans, settings)] == ["a b", "c"]


def test_utterances_follow_the_spoken_stretches_of_a_long_recording(
    engine: BuiltinEngine, speech: dict[str, Fixture], fixture_audio: dict[str, np.ndarray]
) -> None:
    fixture = speech["long-slt"]
    utterances = list(engine.batch_transcriber().utterances(fixture_audio[fixture.name]))
    assert len(utterances) == len(fixture.speech)
    for utterance, (start, end) in zip(utterances, fixture.speech, strict=True):
        # Word timestamps come from cross-attention: a few tenths of a second off the true bounds.
        assert abs(utterance.start - start) < 0.5 and abs(utterance.end - end) < 0.5
    assert_reaches_end(fixture, " ".join(u.text for u in utterances))


def test_batched_wer_is_within_a_tenth_of_streaming_on_the_long_recording(
    engine: BuiltinEngine,
    speech: dict[str, Fixture],
    fixture_audio: dict[str, np.ndarray],
    fast_transcripts: dict[str, TranscriptionReport],
) -> None:
    fixture = speech["long-slt"]
    assert fixture.name in {name for bound in ACCURACY.values() for name in bound.fixtures}
    batched = " ".join(u.text for u in engine.batch_transcriber().utterances(fixture_audio[fixture.name]))
    streamed = fast_transcripts[fixture.name].text
    batched_wer, streamed_wer = wer([fixture.text], [batched]), wer([fixture.text], [streamed])
    one_word = 1 / len(words(fixture.text))  # streaming is often perfect here: 1.1 x 0 leaves no margin at all
    assert batched_wer <= 1.1 * streamed_wer + one_word, (batched_wer, streamed_wer)
