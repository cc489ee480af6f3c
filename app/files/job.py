"""Transcribing one file as fast as the engine allows, with progress and a clean cancel.

This is the Qt-free API the CLI and the window share::

    job = FileTranscription(engine, read_audio(path), on_progress=show)
    report = await job.run()      # job.cancel() from any thread stops it early
    report.partial                # True if it was cancelled before the end

An engine that can decode a recording whole (:class:`WholeFileEngine`: the built-in one, VAD
segments and batched beam search, :mod:`voxdesk.engine.whisper.batch`) gets the file at once;
other engines, and ``realtime=True``, stream it
(:func:`~voxdesk.app.files.transcription.transcribe_audio`).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from voxdesk.app.files.transcription import TimedEvent, TranscriptionReport, UtteranceReport, transcribe_audio
from voxdesk.engine.events import TextDelta, UtteranceDone, UtteranceStats
from voxdesk.engine.session import SAMPLE_RATE, StreamingEngine
from voxdesk.engine.whisper.batch import BatchSettings, BatchTranscriber, TranscribedUtterance

__all__ = ["FileProgress", "FileTranscription", "ProgressListener", "WholeFileEngine"]


@runtime_checkable
class WholeFileEngine(Protocol):
    """What an engine can do beside streaming: decode a whole recording at once, in batches
    (:meth:`~voxdesk.engine.whisper.builtin.BuiltinEngine.batch_transcriber`), much faster than
    feeding it through a session."""

    def batch_transcriber(self, settings: BatchSettings | None = None) -> BatchTranscriber:
        """A whole-file transcriber with the engine's model; the engine must be loaded."""
        ...


@dataclass(frozen=True)
class FileProgress:
    """How far a file transcription is: audio seconds done of ``duration``, after ``elapsed`` wall seconds."""

    position: float
    duration: float
    elapsed: float

    @property
    def fraction(self) -> float:
        """Share of the file done, 0 to 1."""
        return min(1.0, self.position / self.duration) if self.duration > 0 else 1.0

    @property
    def speed(self) -> float | None:
        """Audio seconds per wall second so far (x real time); ``None`` before any progress."""
        return self.position / self.elapsed if self.position > 0 and self.elapsed > 0 else None

    @property
    def remaining(self) -> float | None:
        """Estimated wall seconds left at the speed so far; ``None`` while unknown."""
        speed = self.speed
        return None if speed is None else max(0.0, self.duration - self.position) / speed


ProgressListener = Callable[[FileProgress], None]


class FileTranscription:
    """One file's transcription: run it once, cancel it at any time, keep what was done."""

    def __init__(
        self,
        engine: StreamingEngine,
        audio: np.ndarray,
        *,
        realtime: bool = False,
        on_progress: ProgressListener | None = None,
        on_event: Callable[[TimedEvent], None] | None = None,
        batch_settings: BatchSettings | None = None,
        vocabulary: tuple[str, ...] = (),
    ) -> None:
        """``engine`` must be loaded. Callbacks run on the event loop that awaits :meth:`run`.
        A ``vocabulary`` (words to bias the engine towards) streams the file even where the
        engine could decode it whole: the whole-file decode takes none."""
        self._engine = engine
        self._audio = audio
        self._realtime = realtime
        self._on_progress = on_progress
        self._on_event = on_event
        self._batch_settings = batch_settings
        self._vocabulary = vocabulary
        self._stop = threading.Event()
        self._started = 0.0

    @property
    def duration(self) -> float:
        """Length of the file's audio in seconds."""
        return len(self._audio) / SAMPLE_RATE

    @property
    def batched(self) -> bool:
        """Whether the file is decoded as a whole (an engine that can, not real time, no vocabulary)
        rather than streamed."""
        return self._whole_file_engine() is not None

    def cancel(self) -> None:
        """Stop soon (safe from any thread); :meth:`run` then returns the partial report."""
        self._stop.set()

    async def run(self) -> TranscriptionReport:
        """Transcribe the file; the report is marked ``partial`` if :meth:`cancel` cut it short."""
        self._started = time.perf_counter()
        self._progress(0.0)
        whole = self._whole_file_engine()
        if whole is not None:
            return await self._run_batched(whole)
        report = await transcribe_audio(
            self._engine,
            self._audio,
            self._realtime,
            self._on_event,
            should_stop=self._stop.is_set,
            on_position=self._progress,
            vocabulary=self._vocabulary,
        )
        report.partial = report.partial and report.transcribed_seconds < self.duration
        return report

    def _whole_file_engine(self) -> WholeFileEngine | None:
        """The engine, where it decodes this file whole: it can, the file is not fed in real time
        and no vocabulary is given."""
        engine = self._engine
        if isinstance(engine, WholeFileEngine) and not self._realtime and not self._vocabulary:
            return engine
        return None

    async def _run_batched(self, engine: WholeFileEngine) -> TranscriptionReport:
        report = TranscriptionReport(audio_seconds=self.duration)
        cpu_start = time.process_time()
        utterances = engine.batch_transcriber(self._batch_settings).utterances(self._audio)
        loop = asyncio.get_running_loop()
        while not self._stop.is_set():
            item = await loop.run_in_executor(None, _next_or_none, utterances)
            if item is None:
                report.transcribed_seconds = self.duration
                break
            report.utterances.append(UtteranceReport(self._emit(item), None, None))
            report.transcribed_seconds = item.end
            self._progress(item.end)
        else:
            report.partial = True
        utterances.close()
        report.wall_seconds = time.perf_counter() - self._started
        report.cpu_seconds = time.process_time() - cpu_start
        self._progress(report.transcribed_seconds)
        return report

    def _emit(self, item: TranscribedUtterance) -> UtteranceDone:
        stats = UtteranceStats(audio_seconds=item.end - item.start, decode_seconds=None, partial_decodes=0)
        done = UtteranceDone(item.text, item.end, item.start, item.end, stats, language=item.language)
        if self._on_event is not None:
            wall = time.perf_counter() - self._started
            self._on_event(TimedEvent(TextDelta(item.text, item.end), wall))
            self._on_event(TimedEvent(done, wall))
        return done

    def _progress(self, position: float) -> None:
        if self._on_progress is not None:
            elapsed = time.perf_counter() - self._started
            self._on_progress(FileProgress(min(position, self.duration), self.duration, elapsed))


def _next_or_none(items: Generator[TranscribedUtterance, None, None]) -> TranscribedUtterance | None:
    return next(items, None)
