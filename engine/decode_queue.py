"""One decoding thread shared by every session of an engine, finals first.

CTranslate2 already spreads one decode over the cores, so decodes run one at a time. The
ones waiting are taken in priority order: a final (a speaker who stopped is waiting for it)
before a partial (a preview the next one replaces). A partial that waited longer than it
may is skipped instead of run (its result is ``None``): its text would be stale when it arrived.
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
    """Runs submitted calls on one thread, highest priority first, first come first within one."""

    def __init__(self, name: str = "whisper") -> None:
        self._jobs: list[_Job] = []
        self._ready = threading.Condition()
        self._order = itertools.count()
        self._closed = False
        self._thread = threading.Thread(target=self._work, name=name, daemon=True)
        self._thread.start()

    def run_final(self, fn: Callable[..., _T], *args: Any) -> asyncio.Future[_T]:
        """Queue ``fn(*args)`` ahead of every partial; a future on the running loop for its result."""
        return self._submit(_Priority.FINAL, None, fn, *args)

    def run_partial(self, within: float, fn: Callable[..., _T], *args: Any) -> asyncio.Future[_T | None]:
        """Queue ``fn(*args)`` behind the finals; its result, or ``None`` if it could not start within ``within`` s."""
        return self._submit(_Priority.PARTIAL, within, fn, *args)

    def _submit(
        self, priority: _Priority, within: float | None, fn: Callable[..., Any], *args: Any
    ) -> asyncio.Future[Any]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        job = _Job(priority, next(self._order), fn, args, loop, future, time.monotonic(), within)
        with self._ready:
            if self._closed:
                raise RuntimeError("the decode queue is closed")
            heapq.heappush(self._jobs, job)
            self._ready.notify()
        return future

    def close(self) -> None:
        """Run what is queued, then stop the thread (waits for it)."""
        with self._ready:
            self._closed = True
            self._ready.notify()
        self._thread.join()

    def _work(self) -> None:
        while (job := self._next()) is not None:
            if job.future.cancelled():  # its session is gone
                continue
            if job.within is not None and time.monotonic() - job.queued > job.within:
                self._settle(job, None, None)
                continue
            try:
                result, error = job.fn(*job.args), None
            except Exception as exc:
                result, error = None, exc
            self._settle(job, result, error)

    def _next(self) -> _Job | None:
        with self._ready:
            while not self._jobs and not self._closed:
                self._ready.wait()
            return heapq.heappop(self._jobs) if self._jobs else None

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
