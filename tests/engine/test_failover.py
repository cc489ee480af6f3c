"""The failover shared by the client engines, without sockets: attempts are scripted generators."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

import numpy as np
import pytest

from voxdesk.engine import EngineUnavailable, ProvisionalText, StreamError, TextDelta, TextRetracted, UtteranceDone
from voxdesk.engine.events import EngineEvent
from voxdesk.engine.failover import Failover, HeardAudio, ServerLost, Servers, split_urls


def test_split_urls_drops_blanks_and_keeps_the_order() -> None:
    assert split_urls(" tcp://a:1, ,tcp://b:2,") == ["tcp://a:1", "tcp://b:2"]


async def _half_second() -> AsyncIterator[np.ndarray]:
    yield np.zeros(8000, np.float32)


def test_shown_text_is_retracted_and_the_next_server_gives_the_whole_text() -> None:
    servers = Servers(["ws://a", "ws://b"])
    tried: list[str] = []
    audio = HeardAudio(_half_second())

    async def attempt() -> AsyncIterator[EngineEvent]:
        tried.append(servers.url)
        if len(tried) == 1:
            await audio.next()
            yield ProvisionalText("hello", 0.5)
            raise ServerLost("closed with code 1006")
        yield TextDelta("hello world", 1.0)
        yield UtteranceDone("hello world", 1.0, 0.0, 1.0)

    async def run() -> list[EngineEvent]:
        return [e async for e in Failover(servers, 5, "speech server").run(attempt, audio)]

    provisional, lost, retracted, delta, done = asyncio.run(run())
    assert tried == ["ws://a", "ws://b"] and servers.url == "ws://b", "the next stream starts where this one ended"
    assert isinstance(lost, StreamError) and not lost.fatal
    assert lost.message == "speech server ws://a lost (closed with code 1006); going on with ws://b"
    assert isinstance(provisional, ProvisionalText) and isinstance(retracted, TextRetracted)
    assert lost.audio_time == retracted.audio_time == 0.5, "they carry the stream's audio time"
    assert isinstance(delta, TextDelta) and isinstance(done, UtteranceDone)


def test_a_server_that_never_answers_runs_out_of_tries_and_a_loss_before_text_retracts_nothing() -> None:
    servers = Servers(["tcp://a:1"])

    async def attempt() -> AsyncIterator[EngineEvent]:
        raise ServerLost("it closed the connection before the transcript")
        yield  # an async generator, as the client engines' attempts are

    async def run() -> list[EngineEvent]:
        return [e async for e in Failover(servers, 1, "Wyoming server").run(attempt, HeardAudio(_half_second()))]

    events = asyncio.run(run())
    assert [(type(e), getattr(e, "fatal", None)) for e in events] == [(StreamError, False), (StreamError, True)]
    assert isinstance(events[-1], StreamError) and events[-1].message.startswith("gave up reconnecting to tcp://a:1")


def test_the_first_server_that_answers_becomes_current_and_no_answer_says_why_for_each() -> None:
    def only_b(servers: Servers) -> Callable[[], Awaitable[None]]:
        async def probe() -> None:
            if servers.url != "ws://b":
                raise ServerLost(f"cannot reach {servers.url}")

        return probe

    servers = Servers(["ws://a", "ws://b", "ws://c"])
    asyncio.run(servers.first_answering(only_b(servers)))
    assert servers.url == "ws://b"
    unreachable = Servers(["ws://c", "ws://a"])
    with pytest.raises(EngineUnavailable, match=r"^cannot reach ws://c; cannot reach ws://a$"):
        asyncio.run(unreachable.first_answering(only_b(unreachable)))


def test_heard_audio_survives_a_cancelled_reader_and_replays_in_pieces() -> None:
    async def scenario() -> tuple[np.ndarray | None, list[int], int]:
        gate, waiting = asyncio.Event(), asyncio.Event()

        async def caller() -> AsyncIterator[np.ndarray]:
            yield np.ones(3, np.float32)
            waiting.set()
            await gate.wait()
            yield np.ones(2, np.float32)

        audio = HeardAudio(caller())
        assert await audio.next() is not None
        reader = asyncio.create_task(audio.next())
        await waiting.wait()  # the reader is inside the caller's iterator, waiting for its next chunk
        reader.cancel()  # a sender cancelled by a lost connection, waiting for the next chunk
        with pytest.raises(asyncio.CancelledError):
            await reader
        gate.set()
        second = await audio.next()  # the caller's iterator is still open
        end = await audio.next()
        assert end is None and audio.ended
        return second, [len(piece) for piece in audio.replay(2)], audio.samples

    second, pieces, samples = asyncio.run(scenario())
    assert second is not None and len(second) == 2
    assert pieces == [2, 2, 1] and samples == 5


def test_a_read_cancelled_as_its_chunk_arrives_leaves_the_chunk_to_the_next_read() -> None:
    """A sender cancelled (its connection lost) just as the caller's chunk arrives: the chunk is
    the next read's, for the next server, not lost between the two."""
    first = np.full(10, 0.5, np.float32)

    async def scenario() -> tuple[np.ndarray | None, int]:
        reader: asyncio.Task[np.ndarray | None] | None = None

        async def chunks() -> AsyncIterator[np.ndarray]:
            assert reader is not None
            reader.cancel()  # the sender is cancelled while the chunk is on its way
            yield first

        heard = HeardAudio(chunks())
        reader = asyncio.ensure_future(heard.next())
        with pytest.raises(asyncio.CancelledError):
            await reader
        return await heard.next(), heard.samples

    chunk, samples = asyncio.run(scenario())
    assert chunk is not None and np.array_equal(chunk, first) and samples == 10
