import asyncio

import numpy as np
import pytest

from voxdesk.engine import AudioBufferFull, AudioFeed, AudioFormatError, check_chunk


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
