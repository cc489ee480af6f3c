"""One file transcription: progress, the batched and streamed paths, and cancelling with a partial result."""

from __future__ import annotations

import asyncio

import numpy as np

from tests.recognition import assert_begins, assert_reaches_end
from tests.speech_fixtures import Fixture
from voxdesk.app.files.job import FileProgress, FileTranscription
from voxdesk.app.files.transcription import TimedEvent
from voxdesk.engine.events import UtteranceDone
from voxdesk.engine.whisper.builtin import BuiltinEngine


def test_the_builtin_engine_decodes_a_file_whole_with_progress(
    engine: BuiltinEngine, speech: dict[str, Fixture], fixture_audio: dict[str, np.ndarray]
) -> None:
    fixture = speech["long-slt"]
    progress: list[FileProgress] = []
    events: list[TimedEvent] = []
    job = FileTranscription(engine, fixture_audio[fixture.name], on_progress=progress.append, on_event=events.append)
    assert job.batched
    report = asyncio.run(job.run())
    assert not report.partial and report.transcribed_seconds == job.duration
    assert_reaches_end(fixture, report.text)
    positions = [p.position for p in progress]
    assert positions == sorted(positions) and positions[0] == 0.0 and positions[-1] == job.duration
    assert progress[-1].fraction == 1.0 and (progress[-1].speed or 0) > 1 and progress[-1].remaining == 0.0
    done = [e.event for e in events if isinstance(e.event, UtteranceDone)]
    assert [d.text for d in done] == [u.done.text for u in report.utterances]
    assert all(u.first_text_latency is None and u.final_latency is None for u in report.utterances)
    assert report.speed > 1


def test_cancel_keeps_what_was_transcribed_so_far(
    engine: BuiltinEngine, speech: dict[str, Fixture], fixture_audio: dict[str, np.ndarray]
) -> None:
    fixture = speech["long-slt"]
    job: FileTranscription

    def cancel_after_first_utterance(progress: FileProgress) -> None:
        if progress.position > 0:
            job.cancel()

    job = FileTranscription(engine, fixture_audio[fixture.name], on_progress=cancel_after_first_utterance)
    report = asyncio.run(job.run())
    assert report.partial and len(report.utterances) == 1
    assert 0 < report.transcribed_seconds < job.duration
    assert_begins(fixture, report.text)


def test_cancel_while_streaming_finishes_the_utterance_that_was_heard(
    engine: BuiltinEngine, speech: dict[str, Fixture], fixture_audio: dict[str, np.ndarray]
) -> None:
    fixture = speech["long-slt"]
    job: FileTranscription

    def cancel_after_first_stretch(progress: FileProgress) -> None:
        if progress.position >= fixture.speech[0][1] + 1.0:
            job.cancel()

    job = FileTranscription(engine, fixture_audio[fixture.name], realtime=True, on_progress=cancel_after_first_stretch)
    assert not job.batched
    report = asyncio.run(job.run())
    assert report.partial and len(report.utterances) == 1
    assert report.transcribed_seconds < fixture.speech[1][1]
    assert report.utterances[0].final_latency is not None
    assert_begins(fixture, report.text)
