"""The decoding threads shared by every session of an engine, finals first.

CTranslate2 already spreads one decode over the cores, so a decode that has the CPU to itself
runs alone. The ones waiting are taken in priority order: a final (a speaker who stopped is
waiting for it) before a partial (a preview the next one replaces). A partial that waited
longer than it may is skipped instead of run (its result is ``None``): its text would be stale
when it arrived.

Under load, with ``lanes = 2``, two decodes run at once and each is told it shares the CPU
(:meth:`DecodeQueue.shares_cpu`), so the decoder gives each one thread: one thread per decode
gets more decodes done per second than two threads per decode, one after the other.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, TypeVar

__all__ = ["DecodeQueue"]

_T = TypeVar("_T")
_THREADS = 2  # the most lanes a queue can be given


class _Priority(IntEnum):
    FINAL = 0
    PARTIAL = 1


@dataclass(order=True)
class _Job:
    priority: int
    order: int
    fn: Callable[..., Any] = field(compare=False)
    args: tuple[Any, ...] = field(compare=False)
    loop: asyncio.AbstractEventLoop = field(compare=False)
    future: asyncio.Future[Any] = field(compare=False)
    queued: float = field(compare=False)
    within: float | None = field(compare=False)  # a partial's longest wait


class DecodeQueue:
    """Runs submitted calls on up to ``lanes`` threads, highest priority first, first come
    first within one.

    ``lanes`` is 1 (one decode at a time) until set to 2, which only makes sense when the
    decoder can run two decodes side by side on one thread each. A second decode starts only
    when the running one shares the CPU: a decode that started alone keeps both cores.
    """

    def __init__(self, name: str = "whisper", clock: Callable[[], float] = time.monotonic) -> None:
        """``name`` names the threads; ``clock`` (seconds) measures how long a partial waited."""
        self.lanes = 1
        self.clock = clock
        self._jobs: list[_Job] = []
        self._ready = threading.Condition()
        self._order = itertools.count()
        self._closed = False
        self._running: dict[int, bool] = {}  # worker thread id: whether its job shares the CPU
        self._threads = [
            threading.Thread(target=self._work, name=f"{name}-{lane}", daemon=True) for lane in range(_THREADS)
        ]
        for thread in self._threads:
            thread.start()

    def run_final(self, fn: Callable[..., _T], *args: Any) -> asyncio.Future[_T]:
        """Queue ``fn(*args)`` ahead of every partial; a future on the running loop for its result."""
        return self._submit(_Priority.FINAL, None, fn, *args)

    def run_partial(self, within: float, fn: Callable[..., _T], *args: Any) -> asyncio.Future[_T | None]:
        """Queue ``fn(*args)`` behind the finals; its result, or ``None`` if it could not start within ``within`` s."""
        return self._submit(_Priority.PARTIAL, within, fn, *args)

    def shares_cpu(self) -> bool:
        """Whether the call running on the calling thread started beside another decode, or
        with others waiting (``False`` outside the queue's threads)."""
        with self._ready:
            return self._running.get(threading.get_ident(), False)

    def _submit(
        self, priority: _Priority, within: float | None, fn: Callable[..., Any], *args: Any
    ) -> asyncio.Future[Any]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        job = _Job(priority, next(self._order), fn, args, loop, future, self.clock(), within)
        with self._ready:
            if self._closed:
                raise RuntimeError("the decode queue is closed")
            heapq.heappush(self._jobs, job)
            self._ready.notify_all()
        return future

    def close(self) -> None:
        """Run what is queued, then stop the threads (waits for them)."""
        with self._ready:
            self._closed = True
            self._ready.notify_all()
        for thread in self._threads:
            thread.join()

    def _work(self) -> None:
        while (job := self._next()) is not None:
            try:
                result, error = self._run(job)
            finally:  # the lane is free before the caller hears: its next call may start at once
                with self._ready:
                    del self._running[threading.get_ident()]
                    self._ready.notify_all()
            self._settle(job, result, error)

    def _run(self, job: _Job) -> tuple[Any, Exception | None]:
        """The job's result or error; ``None`` for one cancelled or waited too long (not run)."""
        if job.future.cancelled() or (job.within is not None and self.clock() - job.queued > job.within):
            return None, None
        try:
            return job.fn(*job.args), None
        except Exception as exc:
            return None, exc

    def _next(self) -> _Job | None:
        """The next job for this thread once it may start one (marked running), or ``None`` when closed."""
        with self._ready:
            while not (self._jobs and self._may_start()):
                if self._closed and not self._jobs:
                    return None
                self._ready.wait()
            job = heapq.heappop(self._jobs)
            self._running[threading.get_ident()] = self.lanes > 1 and bool(self._running or self._jobs)
            return job

    def _may_start(self) -> bool:
        return len(self._running) < self.lanes and all(self._running.values())

    @staticmethod
    def _settle(job: _Job, result: Any, error: Exception | None) -> None:
        def settle() -> None:
            if job.future.done():
                return
            if error is not None:
                job.future.set_exception(error)
            else:
                job.future.set_result(result)

        with contextlib.suppress(RuntimeError):  # the loop that asked is closed: nobody is waiting
            job.loop.call_soon_threadsafe(settle)
