"""``/metrics`` says how long each utterance's decodes waited behind other sessions'.

The engine's decode queue runs on a clock the test moves: the first decode is held until the
other session's decode waits behind it, and the clock moves on while it is held, so that
session's wait is there on every run, whatever this machine's load.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import numpy as np

from tests.engine.lockstep import shared_decoder
from tests.engine.realtime.harness import TRANSCRIPTION, metric, metrics, run, session, transcribe
from tests.engine.test_decode_queue import FakeClock, WatchedQueue
from tests.engine.wrapped_decoder import WrappedDecoder
from tests.recognition import assert_recognized
from tests.speech_fixtures import Fixture
from voxdesk.engine.whisper.builtin import BuiltinEngine
from voxdesk.engine.whisper.decoder import Guess, WhisperDecoder
from voxdesk.server.realtime.server import ServerConfig, running_server

QUEUE = "voxdesk_realtime_engine_queue_seconds"
HELD_S = 0.25  # how far the clock moves while the first decode is held


class HoldsFirstDecode(WrappedDecoder):
    """The real decoder; its first call returns only once another call waits behind it on
    ``queue``, and moves the queue's clock on ``HELD_S`` first."""

    def __init__(self, decoder: WhisperDecoder, queue: WatchedQueue, clock: FakeClock) -> None:
        super().__init__(decoder)
        self._queue, self._clock = queue, clock
        self._first = threading.Lock()

    def _hold_if_first(self) -> None:
        if self._first.acquire(blocking=False):
            assert self._queue.held_back.wait(TRANSCRIPTION), "no other session's decode came to wait"
            self._clock.now += HELD_S

    def partial(self, *args: Any) -> Guess:
        self._hold_if_first()
        return self._decoder.partial(*args)

    def final(self, *args: Any) -> list[str]:
        self._hold_if_first()
        return self._decoder.final(*args)


def test_two_sessions_at_once_each_report_their_decode_queue_wait(
    speech: dict[str, Fixture], fixture_audio: dict[str, np.ndarray]
) -> None:
    names = ["command00-slt", "command01-slt"]
    queue, clock = WatchedQueue(lanes=1), FakeClock()  # one decode at a time: the held one keeps the other waiting
    queue.clock = clock
    engine = BuiltinEngine(decodes=queue)
    engine._decoder = HoldsFirstDecode(shared_decoder(queue), queue, clock)  # type: ignore[assignment]

    async def scenario() -> None:
        async with running_server(engine, ServerConfig(port=0)) as server:
            before = metric(await metrics(server), f"{QUEUE}_count")

            async def one(name: str) -> str:
                async with session(server) as ws:
                    return (await transcribe(ws, fixture_audio[name])).text

            texts = await asyncio.gather(*(one(name) for name in names))
            for name, text in zip(names, texts, strict=True):
                assert_recognized(speech[name], text)
            after = await metrics(server)
            assert metric(after, f"{QUEUE}_count") >= before + 2  # one per utterance, each fixture has one or more
            assert metric(after, f"{QUEUE}_sum") > 0.0
            assert metric(after, f"{QUEUE}_sum") >= HELD_S  # the held decode's whole hold, on the queue's clock
            assert f'{QUEUE}_bucket{{le="0.5"}}' in after

    try:
        run(scenario)
    finally:
        asyncio.run(engine.aclose())
