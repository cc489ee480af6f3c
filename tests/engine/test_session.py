import asyncio
from collections.abc import AsyncIterator

import numpy as np
import pytest

from tests.engine.fake_held_engine import FakeHeldEngine
from voxdesk.engine import AudioBufferFull, AudioFeed, AudioFormatError, check_chunk
from voxdesk.engine.events import EngineEvent, UtteranceDone


@pytest.mark.parametrize(
    ("chunk", "message"),
    [
        ([0.0, 0.1], "NumPy array"),
        (np.zeros((10, 2), np.float32), "mono"),
        (np.zeros(10, np.int16), "float32"),
        (np.array([0.0, np.nan], np.float32), "NaN"),
        (np.array([np.inf], np.float32), "infinite"),
    ],
)
def test_check_chunk_rejects_audio_outside_the_contract(chunk: object, message: str) -> None:
    with pytest.raises(AudioFormatError, match=message):
        check_chunk(chunk)


def test_check_chunk_accepts_empty_and_non_contiguous_chunks() -> None:
    assert check_chunk(np.zeros(0, np.float32)).size == 0
    strided = np.arange(10, dtype=np.float32)[::2]
    assert check_chunk(strided).flags["C_CONTIGUOUS"]


def test_audio_feed_yields_pushed_chunks_in_order_then_ends() -> None:
    async def scenario() -> list[np.ndarray]:
        feed = AudioFeed()
        feed.push(np.ones(3, np.float32))
        feed.push(np.zeros(2, np.float32))
        feed.end()
        feed.end()
        return [chunk async for chunk in feed]

    chunks = asyncio.run(scenario())
    assert [len(c) for c in chunks] == [3, 2]


def test_audio_feed_refuses_audio_beyond_its_bound_and_keeps_what_it_has() -> None:
    async def scenario() -> None:
        feed = AudioFeed(max_buffered_seconds=1.0)
        feed.push(np.zeros(12_000, np.float32))
        with pytest.raises(AudioBufferFull):
            feed.push(np.zeros(8_000, np.float32))
        assert feed.buffered_seconds == pytest.approx(0.75)
        feed.end()
        assert sum([len(c) async for c in feed]) == 12_000
        assert feed.buffered_seconds == 0

    asyncio.run(scenario())


def test_audio_feed_put_waits_for_room_and_gives_up_when_the_feed_ends() -> None:
    async def scenario() -> None:
        feed = AudioFeed(max_buffered_seconds=1.0)
        assert await feed.put(np.zeros(12_000, np.float32))
        waiting = asyncio.ensure_future(feed.put(np.zeros(8_000, np.float32)))
        await asyncio.sleep(0.05)
        assert not waiting.done(), "put did not wait for room"
        chunks = aiter(feed)
        assert len(await anext(chunks)) == 12_000  # reading makes room
        assert await asyncio.wait_for(waiting, 1.0)
        assert feed.buffered_seconds == 0.5
        blocked = asyncio.ensure_future(feed.put(np.zeros(12_000, np.float32)))
        await asyncio.sleep(0.05)
        feed.end()
        assert await asyncio.wait_for(blocked, 1.0) is False
        assert not await feed.put(np.zeros(1, np.float32))

    asyncio.run(scenario())


def test_audio_feed_refuses_push_after_end() -> None:
    async def scenario() -> None:
        feed = AudioFeed()
        feed.end()
        with pytest.raises(RuntimeError):
            feed.push(np.zeros(1, np.float32))

    asyncio.run(scenario())


async def collect(events: AsyncIterator[EngineEvent]) -> list[EngineEvent]:
    return [event async for event in events]


def numbered(count: int, samples: int = 4_000) -> list[np.ndarray]:
    """``count`` chunks of ``samples`` each, every sample holding its chunk's number."""
    return [np.full(samples, number, np.float32) for number in range(count)]


def test_a_drop_oldest_feed_keeps_the_newest_audio_within_its_bound_and_counts_the_rest() -> None:
    async def scenario() -> None:
        feed = AudioFeed(max_buffered_seconds=1.0, drop_oldest=True)
        for chunk in numbered(10):  # 2.5 s into a 1 s feed nobody reads
            feed.push(chunk)
            assert feed.buffered_seconds <= 1.0
        assert feed.buffered_seconds == 1.0
        assert feed.dropped_seconds == 1.5
        assert await asyncio.wait_for(feed.put(np.full(4_000, 10, np.float32)), 1.0)  # dropped again, no wait
        feed.end()
        assert [int(chunk[0]) async for chunk in feed] == [7, 8, 9, 10]
        assert feed.dropped_seconds == 1.75

    asyncio.run(scenario())


def test_a_held_engine_reads_the_newest_audio_on_release_and_its_times_map_back_past_the_gap() -> None:
    async def scenario() -> None:
        engine = FakeHeldEngine()
        feed = AudioFeed(max_buffered_seconds=1.0, drop_oldest=True)
        events = asyncio.ensure_future(collect(engine.stream(feed)))
        chunks = numbered(12)
        for chunk in chunks[:8]:  # 2 s while the engine is held: the oldest second goes
            feed.push(chunk)
        assert feed.buffered_seconds == 1.0 and feed.dropped_seconds == 1.0
        engine.release.set()
        await asyncio.wait_for(engine.until_heard(4 * 4_000), 5.0)  # it caught up on what the feed kept
        for chunk in chunks[8:]:
            feed.push(chunk)
        feed.end()
        done = (await events)[-1]
        assert isinstance(done, UtteranceDone)
        assert [int(chunk[0]) for chunk in engine.heard] == [4, 5, 6, 7, 8, 9, 10, 11]
        assert done.speech_end == 2.0  # the engine's own time: what it read
        assert feed.pushed_seconds(done.speech_end) == 3.0  # the time in what was pushed
        assert feed.pushed_seconds(0.0) == 1.0  # the gap sits where the engine stood when it opened
        assert feed.dropped_seconds == 1.0

    asyncio.run(scenario())


def test_pushed_seconds_adds_each_gap_from_where_the_reader_stood() -> None:
    async def scenario() -> None:
        feed = AudioFeed(max_buffered_seconds=0.5, drop_oldest=True)  # two chunks of 0.25 s
        chunks, reader = numbered(8), aiter(feed)
        for chunk in chunks[:3]:  # chunk 0 dropped at read position 0
            feed.push(chunk)
        assert [int((await asyncio.wait_for(anext(reader), 1.0))[0]) for _ in range(2)] == [1, 2]
        for chunk in chunks[3:8]:  # chunks 3, 4, 5 dropped at read position 0.5 s
            feed.push(chunk)
        assert [int((await asyncio.wait_for(anext(reader), 1.0))[0]) for _ in range(2)] == [6, 7]
        assert feed.dropped_seconds == 1.0
        assert [feed.pushed_seconds(t) for t in (0.0, 0.25, 0.5, 0.75, 1.0)] == [0.25, 0.5, 1.5, 1.75, 2.0]

    asyncio.run(scenario())
