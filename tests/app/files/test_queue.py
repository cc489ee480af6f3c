"""The file queue without Qt: one job at a time in order, progress, cancel, failures, and the
built-in runner recording a real file in the history."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.conftest import fixture_path
from tests.recognition import assert_begins, assert_recognized
from tests.speech_fixtures import Fixture
from voxdesk.app.files.queue import FileJob, FileQueue, JobOutcome, JobState, ProgressSink
from voxdesk.app.files.queue_runner import EngineFileRunner
from voxdesk.app.files.reading import AudioFileError
from voxdesk.app.history.store import HistoryStore
from voxdesk.app.settings import EngineSettings
from voxdesk.engine.kinds import EngineKind
from voxdesk.engine.testing import FakeTickEngine
from voxdesk.engine.whisper.builtin import BuiltinEngine


class FakeRunner:
    """Reports progress in steps; ``gate`` holds a file until the test lets it go."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.gates: dict[str, asyncio.Event] = {}
        self.keep_partial = False

    async def __call__(self, path: Path, progress: ProgressSink) -> JobOutcome:
        self.started.append(path.name)
        if path.suffix == ".bad":
            raise AudioFileError(f"{path}: not a readable audio file (format not recognised)")
        progress(0.0, 10.0, None)
        try:
            await self.gates.setdefault(path.name, asyncio.Event()).wait()
        except asyncio.CancelledError:
            if self.keep_partial:
                return JobOutcome("first half", session_id=7, partial=True)
            raise
        progress(10.0, 10.0, 5.0)
        return JobOutcome(f"text of {path.name}", session_id=len(self.started))


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


def test_files_run_one_at_a_time_in_order_with_progress() -> None:
    async def scenario() -> None:
        runner = FakeRunner()
        queue = FileQueue(runner)
        seen: list[tuple[str, JobState, float | None]] = []
        queue.subscribe(lambda job: seen.append((job.path.name, job.state, job.fraction)))
        first, second = queue.add([Path("a.wav"), Path("b.wav")])
        await settle()
        assert runner.started == ["a.wav"] and second.state == JobState.QUEUED
        assert (first.state, first.position, first.duration, first.fraction) == (JobState.RUNNING, 0.0, 10.0, 0.0)
        runner.gates["a.wav"].set()
        await settle()
        assert first.state == JobState.DONE and first.outcome == JobOutcome("text of a.wav", 1)
        assert (first.fraction, first.speed) == (1.0, 5.0)
        assert runner.started == ["a.wav", "b.wav"]
        runner.gates["b.wav"].set()
        await queue.wait_idle()
        assert [job.state for job in queue.jobs] == [JobState.DONE, JobState.DONE]
        assert ("a.wav", JobState.QUEUED, None) in seen and ("a.wav", JobState.RUNNING, 0.0) in seen
        assert seen[-1] == ("b.wav", JobState.DONE, 1.0)

    asyncio.run(scenario())


def test_cancel_a_queued_job_and_the_running_one() -> None:
    async def scenario() -> None:
        runner = FakeRunner()
        queue = FileQueue(runner)
        running, queued, last = queue.add([Path("a.wav"), Path("b.wav"), Path("c.wav")])
        await settle()
        queue.cancel(queued.id)
        assert queued.state == JobState.CANCELLED
        queue.cancel(running.id)
        await settle()
        assert running.state == JobState.CANCELLED and running.outcome is None
        assert runner.started == ["a.wav", "c.wav"] and last.state == JobState.RUNNING
        queue.cancel(running.id)  # finished: nothing changes
        runner.gates["c.wav"].set()
        await queue.wait_idle()
        assert [job.state for job in queue.jobs] == [JobState.CANCELLED, JobState.CANCELLED, JobState.DONE]

    asyncio.run(scenario())


def test_a_runner_may_keep_what_it_had_when_cancelled() -> None:
    async def scenario() -> None:
        runner = FakeRunner()
        runner.keep_partial = True
        queue = FileQueue(runner)
        (job,) = queue.add([Path("a.wav")])
        await settle()
        queue.cancel(job.id)
        await queue.wait_idle()
        assert job.state == JobState.CANCELLED
        assert job.outcome == JobOutcome("first half", session_id=7, partial=True)

    asyncio.run(scenario())


def test_a_failed_file_says_why_and_the_queue_goes_on() -> None:
    async def scenario() -> None:
        runner = FakeRunner()
        queue = FileQueue(runner)
        bad, good = queue.add([Path("notes.bad"), Path("b.wav")])
        await settle()
        assert bad.state == JobState.FAILED and "not a readable audio file" in bad.error
        runner.gates["b.wav"].set()
        await queue.wait_idle()
        assert good.state == JobState.DONE

    asyncio.run(scenario())


def test_closing_the_queue_cancels_every_unfinished_job() -> None:
    async def scenario() -> None:
        queue = FileQueue(FakeRunner())
        jobs = queue.add([Path("a.wav"), Path("b.wav")])
        await settle()
        await queue.aclose()
        assert [job.state for job in jobs] == [JobState.CANCELLED, JobState.CANCELLED]

    asyncio.run(scenario())


def test_the_builtin_runner_records_a_real_file_in_the_history(
    engine: BuiltinEngine, speech: dict[str, Fixture], tmp_path: Path
) -> None:
    fixture = speech["command09-slt"]
    store = HistoryStore.open(tmp_path / "history.db")

    async def scenario() -> list[FileJob]:
        runner = EngineFileRunner(store, EngineSettings(), engine_factory=lambda choice: engine)  # shared, loaded
        queue = FileQueue(runner)
        jobs = queue.add([fixture_path(fixture), tmp_path / "missing.wav"])
        await queue.wait_idle()
        return jobs

    done, missing = asyncio.run(scenario())
    assert done.state == JobState.DONE and done.outcome is not None and done.outcome.session_id is not None
    assert done.duration is not None and done.position == done.duration and done.speed
    assert_recognized(fixture, done.outcome.text)
    session = store.session(done.outcome.session_id)
    assert (session.kind, session.engine, session.source) == ("file", "builtin", str(fixture_path(fixture)))
    assert_recognized(fixture, " ".join(u.text for u in store.utterances(session.id)))
    assert missing.state == JobState.FAILED and "no such file" in missing.error
    store.close()


def test_cancelling_a_real_file_keeps_the_part_transcribed_as_a_partial_session(
    engine: BuiltinEngine, speech: dict[str, Fixture], tmp_path: Path
) -> None:
    fixture = speech["long-slt"]
    store = HistoryStore.open(tmp_path / "history.db")

    async def scenario() -> FileJob:
        queue = FileQueue(EngineFileRunner(store, EngineSettings(), engine_factory=lambda choice: engine))
        queue.subscribe(lambda job: queue.cancel(job.id) if job.position > 0 else None)  # at the first progress
        (job,) = queue.add([fixture_path(fixture)])
        await queue.wait_idle()
        return job

    job = asyncio.run(scenario())
    assert job.state == JobState.CANCELLED and job.outcome is not None and job.outcome.partial
    assert job.duration is not None and 0 < job.position < job.duration
    assert job.outcome.session_id is not None
    assert store.session(job.outcome.session_id).ended_at is None  # how the history marks a partial file
    assert_begins(fixture, job.outcome.text)
    store.close()


def test_the_runner_takes_new_whisper_settings_from_the_next_file_on(speech: dict[str, Fixture]) -> None:
    built: list[tuple[EngineSettings, FakeTickEngine]] = []

    def factory(choice: EngineSettings) -> FakeTickEngine:
        built.append((choice, FakeTickEngine()))
        return built[-1][1]

    async def scenario() -> None:
        runner = EngineFileRunner(None, EngineSettings(EngineKind.REMOTE, whisper_model="base.en"), factory)
        queue = FileQueue(runner)
        path = fixture_path(speech["command07-slt"])
        queue.add([path, path])
        await queue.wait_idle()
        runner.use(EngineSettings(EngineKind.VLLM, whisper_model="base.en", vllm_model="other"))  # same Whisper
        queue.add([path])
        await queue.wait_idle()
        runner.use(EngineSettings(whisper_model="small.en", device="cpu"))
        queue.add([path])
        await queue.wait_idle()
        assert [job.state for job in queue.jobs] == [JobState.DONE] * 4
        assert queue.jobs[0].outcome is not None and queue.jobs[0].outcome.text.startswith("tick ")
        await runner.aclose()

    asyncio.run(scenario())
    assert [(c.kind, c.whisper_model, c.device) for c, _ in built] == [
        (EngineKind.BUILTIN, "base.en", "auto"),
        (EngineKind.BUILTIN, "small.en", "cpu"),
    ]
