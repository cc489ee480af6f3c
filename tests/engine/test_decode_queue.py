"""The decoding thread's queue: finals before partials, stale partials skipped, errors passed on.

Nothing here waits for time to pass: a test that needs a thread to have left a call waiting
waits for :class:`WatchedQueue` to say so, and partials go stale on a clock the test moves.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable
from typing import TypeVarTuple

import pytest

from voxdesk.engine.whisper.decode_queue import DecodeQueue

_Ts = TypeVarTuple("_Ts")
_WAIT = 10.0  # seconds before a wait that should already be over gives up (the test then fails)


class WatchedQueue(DecodeQueue):
    """A real queue that sets ``held_back`` each time one of its threads looks at a waiting
    call and leaves it waiting, so a test can wait for that instead of sleeping."""

    def __init__(self, lanes: int) -> None:
        super().__init__()
        self.lanes = lanes
        self.held_back = threading.Event()

    def _may_start(self) -> bool:
        may = super()._may_start()
        if not may:
            self.held_back.set()
        return may


class HandOverHoldingLoop(asyncio.SelectorEventLoop):
    """A real event loop that, once ``armed``, keeps the decode thread that next hands it a
    result there (the result already on its way to the loop) until ``let_go`` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.armed, self.let_go = threading.Event(), threading.Event()

    def call_soon_threadsafe(
        self, callback: Callable[[*_Ts], object], *args: *_Ts, context: contextvars.Context | None = None
    ) -> asyncio.Handle:
        handle = super().call_soon_threadsafe(callback, *args, context=context)
        if threading.current_thread().name.startswith("whisper-") and self.armed.is_set():
            self.armed.clear()
            self.let_go.wait(_WAIT)
        return handle


class FakeClock:
    """A clock that stands still until the test moves it."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_waiting_finals_run_before_waiting_partials_in_the_order_they_came() -> None:
    queue = DecodeQueue()
    ran: list[str] = []
    release = threading.Event()

    async def scenario() -> None:
        busy = queue.run_final(release.wait)
        jobs = [
            queue.run_partial(60.0, ran.append, "partial 1"),
            queue.run_final(ran.append, "final 1"),
            queue.run_partial(60.0, ran.append, "partial 2"),
            queue.run_final(ran.append, "final 2"),
        ]
        release.set()
        await asyncio.gather(busy, *jobs)

    asyncio.run(scenario())
    queue.close()
    assert ran == ["final 1", "final 2", "partial 1", "partial 2"]


def test_a_partial_that_waited_too_long_is_skipped_and_not_run() -> None:
    clock = FakeClock()
    queue = DecodeQueue(clock=clock)
    ran: list[str] = []
    release = threading.Event()

    async def scenario() -> None:
        busy = queue.run_final(release.wait)
        stale = queue.run_partial(0.05, lambda: "stale")
        fresh = queue.run_partial(60.0, lambda: "fresh")
        clock.now += 0.1
        release.set()
        await busy
        ran.extend([str(await stale), str(await fresh)])

    asyncio.run(scenario())
    queue.close()
    assert ran == ["None", "fresh"]


def test_an_error_reaches_the_caller_and_the_thread_goes_on() -> None:
    queue = DecodeQueue()

    async def scenario() -> int:
        with pytest.raises(ZeroDivisionError):
            await queue.run_final(lambda: 1 // 0)
        return await queue.run_final(lambda: 42)

    assert asyncio.run(scenario()) == 42
    queue.close()


def test_a_cancelled_call_is_not_run_and_a_closed_queue_takes_nothing() -> None:
    queue = DecodeQueue()
    ran: list[str] = []
    release = threading.Event()

    async def scenario() -> None:
        busy = queue.run_final(release.wait)
        gone = queue.run_final(ran.append, "gone")
        gone.cancel()
        release.set()
        await busy
        await queue.run_final(ran.append, "kept")

    asyncio.run(scenario())
    queue.close()
    assert ran == ["kept"]

    async def late() -> None:
        queue.run_final(ran.append, "late")

    with pytest.raises(RuntimeError, match="closed"):
        asyncio.run(late())


def test_with_two_lanes_two_waiting_calls_run_side_by_side_and_each_shares_the_cpu() -> None:
    queue = DecodeQueue()
    queue.lanes = 2
    started, release = threading.Event(), threading.Event()
    together = threading.Barrier(2, timeout=_WAIT)  # passes only when both calls run at once

    def first() -> bool:
        started.set()
        release.wait()
        return queue.shares_cpu()

    def side_by_side() -> bool:
        together.wait()
        return queue.shares_cpu()

    async def scenario() -> list[bool | None]:
        alone = queue.run_final(first)
        await asyncio.to_thread(started.wait)
        final, partial = queue.run_final(side_by_side), queue.run_partial(60.0, side_by_side)
        release.set()
        shared_when_alone = await alone
        pair = await asyncio.gather(final, partial)
        return [shared_when_alone, *pair, await queue.run_final(queue.shares_cpu)]

    assert asyncio.run(scenario()) == [False, True, True, False]
    queue.close()


def test_a_call_made_the_moment_a_shared_decode_is_answered_runs_alone() -> None:
    """The lane is free before the result reaches the loop: the decode thread is held right
    after handing the result over, and the call the answer prompts must not start beside it."""
    queue = DecodeQueue()
    queue.lanes = 2
    started, release, go = threading.Event(), threading.Event(), threading.Event()

    def first() -> None:
        started.set()
        release.wait()

    def shared() -> bool:
        go.wait()
        return queue.shares_cpu()

    async def scenario() -> list[bool]:
        loop = asyncio.get_running_loop()
        assert isinstance(loop, HandOverHoldingLoop)
        alone = queue.run_final(first)
        await asyncio.to_thread(started.wait)
        # Both wait behind the first, so each starts sharing the CPU: one with the other waiting,
        # the other beside it. The quick one ends; the held one then runs on, marked sharing.
        held, quick = queue.run_final(shared), queue.run_final(lambda: None)
        release.set()
        await asyncio.gather(alone, quick)
        loop.armed.set()
        go.set()
        shared_before = await held

        def next_call() -> bool:
            loop.let_go.set()
            return queue.shares_cpu()

        return [shared_before, await queue.run_final(next_call)]

    with asyncio.Runner(loop_factory=HandOverHoldingLoop) as runner:
        assert runner.run(scenario()) == [True, False]
    queue.close()


def test_no_call_starts_beside_one_that_has_the_cpu_to_itself() -> None:
    queue = WatchedQueue(lanes=2)
    ran: list[str] = []
    started, release = threading.Event(), threading.Event()

    def first() -> None:
        started.set()
        release.wait()
        ran.append("alone")

    async def scenario() -> None:
        busy = queue.run_final(first)
        await asyncio.to_thread(started.wait)
        waiting = queue.run_final(ran.append, "after")
        await asyncio.to_thread(queue.held_back.wait, _WAIT)  # the free thread left it waiting
        ran.append("released")
        release.set()
        await asyncio.gather(busy, waiting)

    asyncio.run(scenario())
    queue.close()
    assert ran == ["released", "alone", "after"]


def test_one_lane_runs_one_call_at_a_time_and_none_shares_the_cpu() -> None:
    queue = WatchedQueue(lanes=1)
    running = 0
    seen: list[tuple[int, bool]] = []

    def call(others_wait: bool) -> None:
        nonlocal running
        running += 1
        seen.append((running, queue.shares_cpu()))
        if others_wait:  # stay until the other thread has left the next call waiting
            queue.held_back.wait(_WAIT)
            queue.held_back.clear()
        running -= 1

    async def scenario() -> None:
        await asyncio.gather(*(queue.run_final(call, n < 3) for n in range(4)))

    asyncio.run(scenario())
    queue.close()
    assert seen == [(1, False)] * 4
