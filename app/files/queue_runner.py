"""Transcribing one queued file on a built-in engine of its own, and recording it in the history.

The queue gets its own engine instead of the one the window listens with: the built-in engine
decodes on a single worker thread, so a long file would hold up live dictation's decodes behind
its own; switching engines in the settings (which closes the live engine) does not kill a file
half done; and the live engine may be a remote server or vLLM, while files are meant to be
decoded whole, in batches, on this computer (:class:`~voxdesk.app.files.job.FileTranscription`).
It takes the Whisper model, device and language from the settings, and costs one more copy of
that model in memory (about 40 MB for tiny.en), loaded on the first file.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from voxdesk.app.engines import EngineFactory, build_engine, file_engine_choice, model_name
from voxdesk.app.files.job import FileTranscription
from voxdesk.app.files.queue import JobOutcome, ProgressSink
from voxdesk.app.files.reading import read_audio
from voxdesk.app.files.transcription import TranscriptionReport
from voxdesk.app.history.recording import record_report
from voxdesk.app.history.store import NOT_RECORDED, HistoryError, HistoryStore
from voxdesk.app.settings import EngineSettings
from voxdesk.engine.session import SAMPLE_RATE, StreamingEngine

__all__ = ["EngineFileRunner"]

logger = logging.getLogger("voxdesk.files.runner")


class EngineFileRunner:
    """A :data:`~voxdesk.app.files.queue.JobRunner`: decodes, transcribes as fast as the engine
    goes, records a ``'file'`` session in ``store`` (when given) and returns the text. Cancelled,
    it keeps what was transcribed so far: recorded as a partial session, returned as a partial
    outcome.

    The engine is the built-in one with ``choice``'s Whisper model, device and language, whatever
    engine ``choice`` names for listening; ``engine_factory`` builds it (tests pass a loaded one).
    """

    def __init__(
        self, store: HistoryStore | None, choice: EngineSettings, engine_factory: EngineFactory = build_engine
    ) -> None:
        self._store = store
        self._engine_factory = engine_factory
        self._choice = file_engine_choice(choice)
        self._engine: tuple[EngineSettings, StreamingEngine] | None = None
        self._loading = asyncio.Lock()

    def use(self, choice: EngineSettings) -> None:
        """Take the Whisper model, device and language of new settings from the next file on."""
        self._choice = file_engine_choice(choice)

    async def __call__(self, path: Path, progress: ProgressSink) -> JobOutcome:
        # Decoding a long file takes a while; one cut short fails instead of giving part of its text.
        audio = await asyncio.to_thread(read_audio, path, whole=True)
        progress(0.0, len(audio) / SAMPLE_RATE, None)
        choice, engine = await self._loaded_engine()
        job = FileTranscription(
            engine, audio, on_progress=lambda done: progress(done.position, done.duration, done.speed)
        )
        running = asyncio.ensure_future(job.run())
        try:
            report = await asyncio.shield(running)
        except asyncio.CancelledError:
            job.cancel()  # the report of what was done comes back soon; keep it
            report = await running
        for error in report.errors:
            logger.warning("%s: %s", path, error.message)
        session_id = self._record(report, path, engine.name, model_name(choice))
        return JobOutcome(report.text, session_id, partial=report.partial)

    def _record(self, report: TranscriptionReport, path: Path, engine_name: str, model: str) -> int | None:
        if self._store is None or not report.utterances:
            return None
        try:
            session_id = record_report(self._store, report, engine=engine_name, model=model, source=str(path.resolve()))
        except HistoryError as error:  # the transcript is still good: the window shows it unrecorded
            logger.warning("%s: not recorded in the history: %s", path, error)
            return None
        return None if session_id == NOT_RECORDED else session_id

    async def _loaded_engine(self) -> tuple[EngineSettings, StreamingEngine]:
        """The engine for the current choice, loaded; one for an older choice is closed first."""
        async with self._loading:
            if self._engine is not None and self._engine[0] != self._choice:
                await self._engine[1].aclose()
                self._engine = None
            if self._engine is None:
                choice = self._choice
                engine = self._engine_factory(choice)
                await engine.load()
                self._engine = (choice, engine)
            return self._engine

    async def aclose(self) -> None:
        """Release the engine, if one was loaded."""
        async with self._loading:
            if self._engine is not None:
                await self._engine[1].aclose()
                self._engine = None
