"""The decoding thread's queue: finals before partials, stale partials skipped, errors passed on."""

from __future__ import annotations

import asyncio
import threading

import pytest

from voxdesk.engine.decode_queue import DecodeQueue


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
