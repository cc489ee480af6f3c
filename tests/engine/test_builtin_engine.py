"""The built-in engine on synthesized speech: accuracy, stream invariants, bad input."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import numpy as np
import pytest

from tests.engine.lockstep import Lockstep
from tests.recognition import ACCURACY, assert_begins, assert_reaches_end, assert_recognized, wer
from tests.speech_fixtures import Fixture
from voxdesk.app.files.pacing import paced_chunks
from voxdesk.app.files.transcription import TranscriptionReport, transcribe_audio
from voxdesk.engine import AudioFormatError, EngineEvent, ProvisionalText, TextDelta, UtteranceDone
from voxdesk.engine.clock import DeliveryClock
from voxdesk.engine.whisper.builtin import BuiltinEngine
from voxdesk.engine.whisper.decoder import model_directory, verify_model


def check_accuracy(label: str, speech: dict[str, Fixture], fast_transcripts: dict[str, TranscriptionReport]) -> None:
    """The word error rate over ``ACCURACY[label]``'s fixtures is within its bound."""
    bound = ACCURACY[label]
    references = [speech[n].text for n in bound.fixtures]
    hypotheses = [fast_transcripts[n].text for n in bound.fixtures]
    assert wer(references, hypotheses) <= bound.max_wer, list(zip(references, hypotheses, strict=True))


def deltas_by_utterance(events: list[EngineEvent]) -> list[tuple[str, str]]:
    """(concatenated deltas, final text) for every utterance of a stream."""
    pairs, pieces = [], []
    for event in events:
        if isinstance(event, TextDelta):
            pieces.append(event.text)
        elif isinstance(event, UtteranceDone):
            pairs.append(("".join(pieces), event.text))
            pieces = []
    return pairs


def check_invariants(report: TranscriptionReport) -> None:
    events = [t.event for t in report.timeline]
    for joined, final in deltas_by_utterance(events):
        assert joined == final
    times = [e.audio_time for e in events]
    assert times == sorted(times), "audio_time went backwards"
    for utterance in report.utterances:
        done = utterance.done
        assert done.speech_start <= done.speech_end <= done.audio_time <= report.audio_seconds + 1e-6
    assert not report.errors


@pytest.mark.parametrize("voice", ["slt", "espeak"])
def test_commands_are_recognized(
    voice: str, speech: dict[str, Fixture], fast_transcripts: dict[str, TranscriptionReport]
) -> None:
    check_accuracy(f"commands-{voice}", speech, fast_transcripts)
    for name in ACCURACY[f"commands-{voice}"].fixtures:
        check_invariants(fast_transcripts[name])


@pytest.mark.parametrize("voice", ["slt", "espeak"])
def test_dictation_passage_is_recognized_in_full(
    voice: str, speech: dict[str, Fixture], fast_transcripts: dict[str, TranscriptionReport]
) -> None:
    check_accuracy(f"passage-{voice}", speech, fast_transcripts)
    check_invariants(fast_transcripts[f"passage-{voice}"])


def test_speech_longer_than_one_whisper_window_is_cut_and_kept_whole(
    speech: dict[str, Fixture], fast_transcripts: dict[str, TranscriptionReport]
) -> None:
    # The 28 s passage has no pause long enough to end an utterance, so the engine must cut
    # it at a segment boundary (max_utterance_seconds=20) without losing or repeating words.
    report = fast_transcripts["passage-slt"]
    assert len([u for u in report.utterances if u.done.text]) >= 2
    assert_reaches_end(speech["passage-slt"], report.text)


def test_a_long_recording_is_transcribed_to_the_end(
    speech: dict[str, Fixture], fast_transcripts: dict[str, TranscriptionReport]
) -> None:
    fixture = speech["long-slt"]
    assert fixture.duration >= 60
    report = fast_transcripts["long-slt"]
    check_accuracy("long-slt", speech, fast_transcripts)
    assert_reaches_end(fixture, report.text)
    assert len(report.utterances) == len(fixture.speech)
    for utterance, (start, end) in zip(report.utterances, fixture.speech, strict=True):
        assert abs(utterance.done.speech_start - start) < 0.3
        assert abs(utterance.done.speech_end - end) < 0.4
    check_invariants(report)


@pytest.mark.parametrize("name", ["silence", "noise"])
def test_silence_and_noise_give_an_empty_transcript(
    name: str, fast_transcripts: dict[str, TranscriptionReport]
) -> None:
    report = fast_transcripts[name]
    assert report.text == ""
    assert not [t for t in report.timeline if isinstance(t.event, TextDelta | ProvisionalText) and t.event.text]


def test_loud_clipped_noise_gives_no_words(engine: BuiltinEngine) -> None:
    noise = np.clip(np.random.default_rng(1).normal(0, 2.0, 16_000 * 4), -1, 1).astype(np.float32)
    report = asyncio.run(transcribe_audio(engine, noise, realtime=False))
    assert report.text == ""


def test_text_appears_while_speech_is_still_going_on(
    speech: dict[str, Fixture], fixture_audio: dict[str, np.ndarray]
) -> None:
    fixture = speech["passage-slt"]
    audio = fixture_audio["passage-slt"][: 9 * 16_000]  # 8.5 s of continuous speech
    lockstep = Lockstep()  # live pace on a virtual clock: what shows before 8 s does not depend on load

    async def run() -> TranscriptionReport:
        engine = lockstep.engine()
        try:
            return await lockstep.transcribe(engine, audio)
        finally:
            await engine.aclose()

    report = asyncio.run(lockstep.run(run()))
    early = [
        t.event
        for t in report.timeline
        if isinstance(t.event, TextDelta | ProvisionalText) and t.event.text and t.event.audio_time < 8.0
    ]
    assert any(isinstance(e, TextDelta) for e in early), "nothing was committed before the speech ended"
    assert any(isinstance(e, ProvisionalText) for e in early)
    assert_begins(fixture, report.text)
    check_invariants(report)


def test_many_small_and_empty_chunks_give_the_same_words(
    engine: BuiltinEngine, speech: dict[str, Fixture], fixture_audio: dict[str, np.ndarray]
) -> None:
    audio = fixture_audio["command09-slt"]

    async def odd_chunks() -> AsyncIterator[np.ndarray]:
        for i, start in enumerate(range(0, len(audio), 37)):
            if i % 5 == 0:
                yield np.zeros(0, np.float32)
            yield audio[start : start + 37]

    async def run() -> str:
        finals = [e.text async for e in engine.stream(odd_chunks()) if isinstance(e, UtteranceDone)]
        return " ".join(finals)

    assert_recognized(speech["command09-slt"], asyncio.run(run()))


def test_bad_audio_raises_a_clear_error_after_the_text_already_produced(
    engine: BuiltinEngine, speech: dict[str, Fixture], fixture_audio: dict[str, np.ndarray]
) -> None:
    audio = fixture_audio["command00-slt"]

    async def then_stereo() -> AsyncIterator[np.ndarray]:
        clock = DeliveryClock()
        async for chunk in paced_chunks(audio, clock, realtime=False):
            yield chunk
        yield np.zeros((1600, 2), np.float32)

    async def run() -> list[EngineEvent]:
        received: list[EngineEvent] = []
        with pytest.raises(AudioFormatError, match="mono"):  # noqa: PT012 - the loop is what raises
            async for event in engine.stream(then_stereo()):
                received.append(event)
        return received

    received = asyncio.run(run())
    finals = [e.text for e in received if isinstance(e, UtteranceDone)]
    assert_recognized(speech["command00-slt"], " ".join(finals))
    # The engine still works after the failed session.
    again = asyncio.run(transcribe_audio(engine, audio, realtime=False))
    assert_recognized(speech["command00-slt"], again.text)


def test_leaving_a_session_early_frees_it(
    engine: BuiltinEngine, speech: dict[str, Fixture], fixture_audio: dict[str, np.ndarray]
) -> None:
    async def endless() -> AsyncIterator[np.ndarray]:
        audio = fixture_audio["passage-slt"]
        while True:
            for start in range(0, len(audio), 1600):
                await asyncio.sleep(0)
                yield audio[start : start + 1600]

    async def first_text() -> TextDelta:
        async for event in engine.stream(endless()):
            if isinstance(event, TextDelta):
                return event
        raise AssertionError("stream ended")

    assert asyncio.run(asyncio.wait_for(first_text(), timeout=120)).text
    again = asyncio.run(transcribe_audio(engine, fixture_audio["command09-slt"], realtime=False))
    assert_recognized(speech["command09-slt"], again.text)


def test_sessions_run_concurrently_on_one_engine(
    speech: dict[str, Fixture], fixture_audio: dict[str, np.ndarray]
) -> None:
    names = ["command01-slt", "command12-slt", "command13-slt"]
    lockstep = Lockstep()  # three live sessions on a virtual clock: their decodes meet the same way on every run
    engine = lockstep.engine()
    assert engine._decodes.lanes == 2  # decodes of different sessions may run side by side

    async def run_all() -> list[TranscriptionReport]:
        try:
            return await asyncio.gather(*(lockstep.transcribe(engine, fixture_audio[n]) for n in names))
        finally:
            await engine.aclose()

    for name, report in zip(names, asyncio.run(lockstep.run(run_all())), strict=True):
        assert_recognized(speech[name], report.text)
        check_invariants(report)


def test_model_files_match_the_pinned_upstream_digests() -> None:
    assert verify_model(model_directory()) == []
