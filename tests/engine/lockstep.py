"""The built-in engine on a virtual clock, one step at a time, so that what a timing test sees
does not depend on how fast this machine decodes or how loaded it is.

Time stands still while anything can still happen without it: a decode computing on a decode
thread, a result on its way to the event loop, a callback the loop has yet to run. Only when all
of that is over does :class:`Lockstep` move its clock, to the next moment something waits for:
a feed's next chunk (heard live at its end, as :func:`~voxdesk.app.files.pacing.paced_chunks`
delivers it) or the end of a decode's cost (:class:`CostedDecoder` charges each call what it
takes on a quiet machine). Decodes compute one at a time, in the decode queue's own order, so
results reach the sessions in the same order on every run; the queue itself is the real one
(priorities, lanes, stale partials) on the virtual clock.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import heapq
import itertools
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import numpy as np

from tests.engine.wrapped_decoder import WrappedDecoder
from voxdesk.app.files.transcription import TimedEvent, TranscriptionReport, UtteranceReport
from voxdesk.engine.clock import DeliveryClock
from voxdesk.engine.events import ProvisionalText, StreamError, TextDelta, UtteranceDone
from voxdesk.engine.session import SAMPLE_RATE
from voxdesk.engine.whisper.builtin import BuiltinEngine, BuiltinSettings
from voxdesk.engine.whisper.decode_queue import DecodeQueue, _Job
from voxdesk.engine.whisper.decoder import Guess, Split, WhisperDecoder

__all__ = ["COSTS", "CostedDecoder", "Lockstep", "first_of", "shared_decoder"]

_T = TypeVar("_T")
STUCK_S = 300.0  # real seconds without a step before the run is declared stuck (fails the test)
COSTS = {"partial": 0.1, "final": 0.3, "split": 0.3, "detect_language": 0.05}
"""Virtual seconds each decoder call takes: about tiny.en's on two cores (benchmarks/README.md:
a partial 0.1-0.15 s, a final 0.3-0.7 s)."""


class _LockstepQueue(DecodeQueue):
    """The real decode queue, on the lockstep's clock; each call waits on its thread for its
    turn to compute, then for the clock to pass the cost it was charged."""

    def __init__(self, clock: Callable[[], float]) -> None:
        super().__init__(clock=clock)
        self.submitted: list[asyncio.Future[Any]] = []
        self.waiting: dict[int, _Job] = {}  # job order: jobs whose thread waits for its turn
        self.computing: int | None = None  # the job given its turn, until it stops computing
        self.parked: dict[int, tuple[float, _Job]] = {}  # job order: when its cost runs out, the job
        self._charged: dict[int, float] = {}  # thread id: cost charged by the call running there
        self._free = False  # closing: calls run unsupervised

    def charge(self, seconds: float) -> None:
        """Add ``seconds`` to the cost of the call running on this thread."""
        with self._ready:
            ident = threading.get_ident()
            self._charged[ident] = self._charged.get(ident, 0.0) + seconds

    def _submit(self, priority: Any, within: float | None, fn: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
        future = super()._submit(priority, within, fn, *args)
        self.submitted.append(future)
        return future

    def _run(self, job: _Job) -> tuple[Any, Exception | None]:
        with self._ready:
            self.waiting[job.order] = job
            self._ready.wait_for(lambda: self._free or self.computing == job.order)
            del self.waiting[job.order]
        try:
            return super()._run(job)
        finally:
            with self._ready:
                cost = self._charged.pop(threading.get_ident(), 0.0)
                if cost > 0 and not self._free:
                    self.parked[job.order] = (self.clock() + cost, job)
                self.computing = None
                self._ready.notify_all()
                self._ready.wait_for(lambda: self._free or job.order not in self.parked)

    def settled(self) -> bool:
        """Whether no thread can move on until the clock does or a call gets its turn: every
        unfinished call queued behind busy lanes, waiting for its turn, or parked."""
        with self._ready:
            if self.computing is not None or (self._jobs and self._may_start()):
                return False
            held = [*self._jobs, *self.waiting.values(), *(job for _, job in self.parked.values())]
            held_futures = {id(job.future) for job in held}
            self.submitted = [future for future in self.submitted if not future.done()]
            return all(id(future) in held_futures for future in self.submitted)

    def close(self) -> None:
        with self._ready:
            self._free = True
            self._ready.notify_all()
        super().close()


class Lockstep:
    """A virtual clock and the one decode queue it steps; engines made by :meth:`engine` run
    on it, inside :meth:`run`."""

    def __init__(self) -> None:
        self.now = 0.0
        self.queue = _LockstepQueue(self.clock)
        self._order = itertools.count()
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._quiet: list[asyncio.Future[None]] = []

    def clock(self) -> float:
        """Virtual seconds since the lockstep was made."""
        return self.now

    def engine(
        self,
        settings: BuiltinSettings | None = None,
        wrap: Callable[[WhisperDecoder, Lockstep], CostedDecoder] | None = None,
    ) -> BuiltinEngine:
        """A loaded built-in engine whose decodes run on this lockstep's queue, with the
        process's one tiny.en decoder (loaded once) wrapped in ``wrap`` (a :class:`CostedDecoder`)."""
        engine = BuiltinEngine(settings, decodes=self.queue)
        decoder = shared_decoder(self.queue)
        engine._decoder = (wrap or CostedDecoder)(decoder, self)  # type: ignore[assignment]
        self.queue.lanes = decoder.parallel_decodes
        return engine

    async def run(self, main: Awaitable[_T]) -> _T:
        """Await ``main`` while stepping the clock; fails if the run gets stuck."""
        task = asyncio.ensure_future(main)
        keeper = asyncio.ensure_future(self._keep())
        try:
            await asyncio.wait({task, keeper}, return_when=asyncio.FIRST_COMPLETED)
            if not task.done():
                task.cancel()  # its own clean-up closes the engine's queue, which lets every call go
                with contextlib.suppress(asyncio.CancelledError):
                    await task
                keeper.result()  # raises what stopped it
            return await task
        finally:
            keeper.cancel()

    async def sleep_until(self, moment: float) -> None:
        """Wait until the virtual clock reaches ``moment`` (at once if it has)."""
        if self.now >= moment:
            return
        woken = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (moment, next(self._order), woken))
        await woken

    async def quiet(self) -> None:
        """Wait until nothing else can happen: no decode, no callback, no sleeper, no parked cost."""
        woken = asyncio.get_running_loop().create_future()
        self._quiet.append(woken)
        await woken

    async def chunks(
        self, audio: np.ndarray, delivery: DeliveryClock, chunk_seconds: float = 0.1
    ) -> AsyncIterator[np.ndarray]:
        """``audio`` in chunks, each once the clock reaches its end, as if it were heard live."""
        step = max(1, int(chunk_seconds * SAMPLE_RATE))
        for begin in range(0, len(audio), step):
            end = min(begin + step, len(audio))
            await self.sleep_until(end / SAMPLE_RATE)
            delivery.record(end, self.now)
            yield audio[begin:end]

    async def transcribe(self, engine: BuiltinEngine, audio: np.ndarray) -> TranscriptionReport:
        """:func:`~voxdesk.app.files.transcription.transcribe_audio` at real-time pace, on the
        virtual clock: event times and latencies are virtual seconds."""
        delivery = DeliveryClock()
        report = TranscriptionReport(
            audio_seconds=len(audio) / SAMPLE_RATE, transcribed_seconds=len(audio) / SAMPLE_RATE
        )
        start = self.now
        first_text: float | None = None
        async for event in engine.stream(self.chunks(audio, delivery)):
            report.timeline.append(TimedEvent(event, self.now - start))
            if isinstance(event, TextDelta | ProvisionalText) and event.text and first_text is None:
                first_text = self.now
            elif isinstance(event, UtteranceDone):
                onset = delivery.delivered_at(event.speech_start)
                latency = (first_text if first_text is not None else self.now) - onset
                final = self.now - delivery.delivered_at(event.speech_end)
                report.utterances.append(UtteranceReport(event, latency, final))
                first_text = None
            elif isinstance(event, StreamError):
                report.errors.append(event)
        report.wall_seconds = self.now - start
        return report

    async def _keep(self) -> None:
        """At each point where nothing can happen without it, take the next step: give the
        first waiting decode its turn, else move the clock to the earliest parked cost's end
        (before a sleeper due at the same moment) or sleeper, else tell a quiet waiter."""
        queue = self.queue
        while True:
            await self._settle()
            while self._sleepers and self._sleepers[0][2].done():  # its waiter was cancelled
                heapq.heappop(self._sleepers)
            self._quiet = [waiter for waiter in self._quiet if not waiter.done()]
            with queue._ready:
                if queue.waiting:
                    queue.computing = min(queue.waiting.values()).order
                    queue._ready.notify_all()
                    continue
                parked = min(((moment, order) for order, (moment, _) in queue.parked.items()), default=None)
                sleeper = self._sleepers[0] if self._sleepers else None
                if parked is not None and (sleeper is None or parked[0] <= sleeper[0]):
                    self.now = max(self.now, parked[0])
                    del queue.parked[parked[1]]
                    queue._ready.notify_all()
                    continue
            if sleeper is not None:
                heapq.heappop(self._sleepers)
                self.now = max(self.now, sleeper[0])
                sleeper[2].set_result(None)
            elif self._quiet:
                self._quiet.pop(0).set_result(None)
            else:
                await asyncio.sleep(0.001)  # nothing waits for the clock: the test is busy elsewhere

    async def _settle(self) -> None:
        """Return once no decode thread is computing or handing over and the loop has nothing
        else to run."""
        loop = asyncio.get_running_loop()
        deadline = time.monotonic() + STUCK_S
        while not (self.queue.settled() and not loop._ready):  # type: ignore[attr-defined]
            if time.monotonic() > deadline:
                raise AssertionError(f"the engine made no step in {STUCK_S:.0f} s")
            await asyncio.sleep(0 if loop._ready else 0.0005)  # type: ignore[attr-defined]


class CostedDecoder(WrappedDecoder):
    """The real decoder; each call is charged its :data:`COSTS` on the lockstep's clock."""

    def __init__(self, decoder: WhisperDecoder, lockstep: Lockstep, costs: dict[str, float] | None = None) -> None:
        super().__init__(decoder)
        self._queue = lockstep.queue
        self.costs = {**COSTS, **(costs or {})}

    def partial(self, audio: np.ndarray, committed: list[str], *rest: Any) -> Guess:
        self._queue.charge(self.costs["partial"])
        return self._decoder.partial(audio, committed, *rest)

    def final(self, *args: Any) -> list[str]:
        self._queue.charge(self.costs["final"])
        return self._decoder.final(*args)

    def split(self, *args: Any) -> Split | None:
        self._queue.charge(self.costs["split"])
        return self._decoder.split(*args)

    def detect_language(self, audio: np.ndarray) -> str:
        self._queue.charge(self.costs["detect_language"])
        return self._decoder.detect_language(audio)


class _AskQueue:
    """``shares_cpu`` of the shared decoder: asks the queue that runs its decodes now."""

    queue: DecodeQueue | None = None

    def __call__(self) -> bool:
        return self.queue is not None and self.queue.shares_cpu()


_ASK_QUEUE = _AskQueue()


def shared_decoder(queue: DecodeQueue) -> WhisperDecoder:
    """The process's one tiny.en decoder (loaded on first use), for an engine a test builds on
    a decode queue of its own: from now on it asks ``queue`` whether a decode shares the CPU."""
    _ASK_QUEUE.queue = queue
    return _loaded_decoder()


@functools.cache
def _loaded_decoder() -> WhisperDecoder:
    return WhisperDecoder(BuiltinSettings().decoder, _ASK_QUEUE)


async def first_of(*waits: Awaitable[Any]) -> None:
    """Return when the first of ``waits`` is over; the others are cancelled."""
    tasks = [asyncio.ensure_future(wait) for wait in waits]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
