"""The decoding thread's queue: finals before partials, stale partials skipped, errors passed on."""

from __future__ import annotations

import asyncio
import threading

import pytest

from voxdesk.engine.whisper.decode_queue import DecodeQueue


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
    queue = DecodeQueue()
    ran: list[str] = []
    release = threading.Event()

    async def scenario() -> None:
        busy = queue.run_final(release.wait)
        stale = queue.run_partial(0.05, lambda: "stale")
        fresh = queue.run_partial(60.0, lambda: "fresh")
        await asyncio.sleep(0.1)
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
    together = threading.Barrier(2, timeout=10)  # passes only when both calls run at once

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


def test_no_call_starts_beside_one_that_has_the_cpu_to_itself() -> None:
    queue = DecodeQueue()
    queue.lanes = 2
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
        await asyncio.sleep(0.2)
        ran.append("released")
        release.set()
        await asyncio.gather(busy, waiting)

    asyncio.run(scenario())
    queue.close()
    assert ran == ["released", "alone", "after"]


def test_one_lane_runs_one_call_at_a_time_and_none_shares_the_cpu() -> None:
    queue = DecodeQueue()
    running = 0
    seen: list[tuple[int, bool]] = []

    def call() -> None:
        nonlocal running
        running += 1
        seen.append((running, queue.shares_cpu()))
        threading.Event().wait(0.05)
        running -= 1

    async def scenario() -> None:
        await asyncio.gather(*(queue.run_final(call) for _ in range(4)))

    asyncio.run(scenario())
    queue.close()
    assert seen == [(1, False)] * 4
