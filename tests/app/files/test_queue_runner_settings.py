"""The window's file runner on real files: it decodes in the settings' language, and a file cut
short fails its job with one line instead of giving part of a transcript."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import soundfile

from voxdesk.app.engines import build_engine
from voxdesk.app.files.queue import FileJob, FileQueue, JobState
from voxdesk.app.files.queue_runner import EngineFileRunner
from voxdesk.app.settings import EngineSettings
from voxdesk.engine.kinds import EngineKind
from voxdesk.engine.session import SAMPLE_RATE
from voxdesk.engine.testing import FakeTickEngine
from voxdesk.engine.whisper.builtin import BuiltinEngine


class RecordingFactory:
    """Builds a FakeTickEngine for each choice and keeps the choices, in order."""

    def __init__(self) -> None:
        self.choices: list[EngineSettings] = []

    def __call__(self, choice: EngineSettings) -> FakeTickEngine:
        self.choices.append(choice)
        return FakeTickEngine()


def two_seconds_of_wav(path: Path) -> Path:
    soundfile.write(str(path), np.zeros(2 * SAMPLE_RATE, np.float32), SAMPLE_RATE, subtype="PCM_16")
    return path


def run_files(runner: EngineFileRunner, *paths: Path) -> list[FileJob]:
    async def scenario() -> list[FileJob]:
        queue = FileQueue(runner)
        jobs = queue.add(list(paths))
        await queue.wait_idle()
        await runner.aclose()
        return jobs

    return asyncio.run(scenario())


def test_files_are_decoded_in_the_language_of_the_settings(tmp_path: Path) -> None:
    wav = two_seconds_of_wav(tmp_path / "a.wav")
    factory = RecordingFactory()
    runner = EngineFileRunner(None, EngineSettings(EngineKind.REMOTE, whisper_model="base", language="de"), factory)
    (job,) = run_files(runner, wav)
    runner.use(EngineSettings(whisper_model="base", language="fr"))  # a new language: a new engine
    (later,) = run_files(runner, wav)
    assert (job.state, later.state) == (JobState.DONE, JobState.DONE)
    assert [(c.kind, c.whisper_model, c.language) for c in factory.choices] == [
        (EngineKind.BUILTIN, "base", "de"),
        (EngineKind.BUILTIN, "base", "fr"),
    ]
    engine = build_engine(factory.choices[0])  # what the window's own factory makes of that choice
    assert isinstance(engine, BuiltinEngine) and engine.settings.decoder.language == "de"


def test_a_truncated_wav_fails_its_job_with_one_line_before_any_engine_loads(tmp_path: Path) -> None:
    whole = two_seconds_of_wav(tmp_path / "whole.wav")
    cut = tmp_path / "cut.wav"
    cut.write_bytes(whole.read_bytes()[:20_000])
    factory = RecordingFactory()
    bad, good = run_files(EngineFileRunner(None, EngineSettings(), factory), cut, whole)
    assert bad.state == JobState.FAILED and bad.outcome is None
    assert bad.error == f"{cut}: truncated: 19956 of 64000 bytes of audio"
    assert good.state == JobState.DONE  # the queue goes on
    assert len(factory.choices) == 1  # loaded for the good file only
