"""A queue of audio files to transcribe, one at a time, with progress and cancel; no Qt.

The window (or a test) adds files and listens: every change to a job is passed to the
listeners as the job itself, on the event loop. How one file is transcribed is the
:data:`JobRunner`'s business (see :mod:`voxdesk.app.files.queue_runner`); the queue only
orders the work, tracks each job's state and cancels.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from voxdesk.engine.errors import VoxdeskError

__all__ = ["FileJob", "FileQueue", "JobOutcome", "JobRunner", "JobState", "ProgressSink"]

logger = logging.getLogger("voxdesk.files.queue")


class JobState(StrEnum):
    """Where a job is; the last three are final."""

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def finished(self) -> bool:
        """Whether the job will not change any more."""
        return self in (JobState.DONE, JobState.FAILED, JobState.CANCELLED)


@dataclass(frozen=True)
class JobOutcome:
    """What a runner made of a file: the text and the history session it was recorded as."""

    text: str
    session_id: int | None = None
    partial: bool = False
    """The runner was cancelled and kept what it had transcribed so far."""


@dataclass
class FileJob:
    """One file in the queue. ``position`` and ``duration`` are seconds of audio."""

    id: int
    path: Path
    state: JobState = JobState.QUEUED
    position: float = 0.0
    duration: float | None = None
    speed: float | None = None
    """Audio seconds transcribed per wall-clock second, once known."""
    outcome: JobOutcome | None = None
    error: str = ""
    stopping: bool = False
    """Cancel was asked for while it runs; it stops at the runner's next chance."""

    @property
    def fraction(self) -> float | None:
        """How much of the file is transcribed (0 to 1), ``None`` while the duration is unknown."""
        if self.state == JobState.DONE:
            return 1.0
        if not self.duration:
            return None
        return min(1.0, max(0.0, self.position / self.duration))


ProgressSink = Callable[[float, float, float | None], None]
"""Told (position, duration, speed) by a runner as a file is transcribed; speed may be ``None``."""

JobRunner = Callable[[Path, ProgressSink], Awaitable[JobOutcome]]
"""Transcribes one file. When cancelled it may return an outcome with ``partial=True``
(what it kept) instead of raising :class:`asyncio.CancelledError`. A :class:`VoxdeskError`
it raises fails the job with its message; any other exception too, logged in full."""

Listener = Callable[[FileJob], None]


class FileQueue:
    """Files transcribed one after another by ``runner``, in the order they were added."""

    def __init__(self, runner: JobRunner) -> None:
        self._runner = runner
        self._jobs: list[FileJob] = []
        self._ids = itertools.count(1)
        self._listeners: list[Listener] = []
        self._worker: asyncio.Task[None] | None = None
        self._running: tuple[FileJob, asyncio.Task[JobOutcome]] | None = None

    @property
    def jobs(self) -> list[FileJob]:
        """Every job added, in order (finished ones included)."""
        return list(self._jobs)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` with a job whenever it changes; returns a function that unsubscribes."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def add(self, paths: Iterable[Path]) -> list[FileJob]:
        """Queue files (call on the running loop); they start when the ones before have finished."""
        added = [FileJob(next(self._ids), Path(path)) for path in paths]
        self._jobs += added
        for job in added:
            self._emit(job)
        if added and (self._worker is None or self._worker.done()):
            self._worker = asyncio.ensure_future(self._work())
        return added

    def cancel(self, job_id: int) -> None:
        """Cancel a queued job, or stop the running one; finished jobs stay as they are."""
        job = next((j for j in self._jobs if j.id == job_id), None)
        if job is None or job.state.finished:
            return
        if self._running is not None and self._running[0] is job:
            if not job.stopping:  # once: a runner that keeps a partial outcome is waited for
                job.stopping = True
                self._running[1].cancel()
                self._emit(job)
            return
        job.state = JobState.CANCELLED
        self._emit(job)

    async def wait_idle(self) -> None:
        """Wait until every job added so far has finished."""
        while self._worker is not None and not self._worker.done():
            await asyncio.shield(self._worker)

    async def aclose(self) -> None:
        """Cancel every unfinished job and wait for the running one to stop."""
        for job in self._jobs:
            self.cancel(job.id)
        await self.wait_idle()

    def _emit(self, job: FileJob) -> None:
        for listener in list(self._listeners):
            try:
                listener(job)
            except Exception:
                logger.exception("a file queue listener failed")

    async def _work(self) -> None:
        while job := next((j for j in self._jobs if j.state == JobState.QUEUED), None):
            await self._run(job)
            current = asyncio.current_task()
            if current is not None and current.cancelling():  # a runner kept its partial outcome
                raise asyncio.CancelledError

    async def _run(self, job: FileJob) -> None:
        def progress(position: float, duration: float, speed: float | None) -> None:
            job.position, job.duration, job.speed = position, duration, speed
            self._emit(job)

        task = asyncio.ensure_future(self._runner(job.path, progress))
        self._running = (job, task)
        job.state = JobState.RUNNING
        self._emit(job)
        try:
            job.outcome = await task
            job.state = JobState.CANCELLED if job.outcome.partial else JobState.DONE
        except asyncio.CancelledError:
            job.state = JobState.CANCELLED
            current = asyncio.current_task()
            if current is not None and current.cancelling():  # the queue itself is stopped, not just this job
                raise
        except VoxdeskError as error:
            job.state, job.error = JobState.FAILED, str(error)
        except Exception as error:
            logger.exception("transcribing %s failed", job.path)
            job.state, job.error = JobState.FAILED, f"{job.path.name}: {error}"
        finally:
            self._running = None
            self._emit(job)
