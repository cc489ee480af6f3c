"""Transcribing one queued file on a built-in engine of its own, and recording it in the history.

The queue gets its own engine instead of the one the window listens with: the built-in engine
decodes on a single worker thread, so a long file would hold up live dictation's decodes behind
its own; switching engines in the settings (which closes the live engine) does not kill a file
half done; and the live engine may be a remote server or vLLM, while files are meant to be
transcribed offline on this computer. It costs one more copy of Whisper tiny.en (about 40 MB),
loaded on the first file.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path

from voxdesk.app.files.queue import JobOutcome, ProgressSink
from voxdesk.app.files.reading import read_audio
from voxdesk.app.files.transcription import TimedEvent, TranscriptionReport, transcribe_audio
from voxdesk.app.history.recording import record_report
from voxdesk.app.history.store import NOT_RECORDED, HistoryError, HistoryStore
from voxdesk.engine import EngineKind, StreamingEngine, create_engine
from voxdesk.engine.session import SAMPLE_RATE

__all__ = ["BUILTIN_MODEL", "EngineFileRunner"]

BUILTIN_MODEL = "whisper-tiny.en"
logger = logging.getLogger("voxdesk.files.runner")


class EngineFileRunner:
    """A :data:`~voxdesk.app.files.queue.JobRunner`: decodes, transcribes as fast as the engine
    goes, records a ``'file'`` session in ``store`` (when given) and returns the text.

    ``engine_factory`` builds the (not yet loaded) engine; it is loaded on the first file.
    """

    def __init__(
        self,
        store: HistoryStore | None,
        engine_factory: Callable[[], StreamingEngine] = lambda: create_engine(EngineKind.BUILTIN),
    ) -> None:
        self._store = store
        self._engine_factory = engine_factory
        self._engine: StreamingEngine | None = None
        self._loading = asyncio.Lock()

    async def __call__(self, path: Path, progress: ProgressSink) -> JobOutcome:
        audio = await asyncio.to_thread(read_audio, path)  # decoding a long file takes a while
        duration = len(audio) / SAMPLE_RATE
        progress(0.0, duration, None)
        engine = await self._loaded_engine()

        def on_event(timed: TimedEvent) -> None:
            position = min(timed.event.audio_time, duration)
            progress(position, duration, position / timed.wall_time if timed.wall_time > 0 else None)

        report = await transcribe_audio(engine, audio, realtime=False, on_event=on_event)
        progress(duration, duration, duration / report.wall_seconds if report.wall_seconds > 0 else None)
        for error in report.errors:
            logger.warning("%s: %s", path, error.message)
        return JobOutcome(report.text, self._record(report, path, engine.name))

    def _record(self, report: TranscriptionReport, path: Path, engine_name: str) -> int | None:
        if self._store is None or not report.utterances:
            return None
        model = BUILTIN_MODEL if engine_name == EngineKind.BUILTIN else ""
        try:
            session_id = record_report(self._store, report, engine=engine_name, model=model, source=str(path.resolve()))
        except HistoryError as error:  # the transcript is still good: the window shows it unrecorded
            logger.warning("%s: not recorded in the history: %s", path, error)
            return None
        return None if session_id == NOT_RECORDED else session_id

    async def _loaded_engine(self) -> StreamingEngine:
        async with self._loading:
            if self._engine is None:
                engine = self._engine_factory()
                await engine.load()
                self._engine = engine
            return self._engine

    async def aclose(self) -> None:
        """Release the engine, if one was loaded."""
        async with self._loading:
            if self._engine is not None:
                await self._engine.aclose()
                self._engine = None
