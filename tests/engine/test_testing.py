"""``voxdesk.engine.testing``: every fake it ships keeps the ``StreamingEngine`` contract."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import numpy as np
import pytest

from voxdesk.engine import testing
from voxdesk.engine.errors import AudioFormatError
from voxdesk.engine.events import EngineEvent, TextDelta, UtteranceDone
from voxdesk.engine.session import SAMPLE_RATE, StreamingEngine

FAKES = [getattr(testing, name) for name in testing.__all__ if isinstance(getattr(testing, name), type)]


async def chunks(*arrays: np.ndarray) -> AsyncIterator[np.ndarray]:
    for array in arrays:
        yield array


async def session(engine: StreamingEngine, *arrays: np.ndarray) -> list[EngineEvent]:
    await engine.load()
    try:
        return [event async for event in engine.stream(chunks(*arrays))]
    finally:
        await engine.aclose()


def test_the_module_exports_fakes_named_as_such() -> None:
    assert FAKES
    assert testing.TICK_SAMPLES == 1280
    for fake in FAKES:
        assert fake.__name__.startswith("Fake") and "FAKE" in (fake.__doc__ or "")


@pytest.mark.parametrize("fake", FAKES)
def test_each_fake_follows_the_streaming_engine_contract(fake: type[StreamingEngine]) -> None:
    engine = fake()
    assert isinstance(engine, StreamingEngine)
    audio = np.zeros(SAMPLE_RATE, np.float32)
    events = asyncio.run(session(engine, audio[:7000], np.zeros(0, np.float32), audio[7000:]))
    assert isinstance(events[-1], UtteranceDone)
    assert "".join(event.text for event in events if isinstance(event, TextDelta)) == events[-1].text
    times = [event.audio_time for event in events]
    assert times == sorted(times) and times[-1] <= 1.0


@pytest.mark.parametrize("fake", FAKES)
def test_each_fake_rejects_audio_outside_the_contract(fake: type[StreamingEngine]) -> None:
    with pytest.raises(AudioFormatError, match="mono"):
        asyncio.run(session(fake(), np.zeros((10, 2), np.float32)))


def test_the_tick_engine_sends_one_delta_per_tick_of_audio() -> None:
    events = asyncio.run(session(testing.FakeTickEngine(), np.zeros(3 * testing.TICK_SAMPLES + 5, np.float32)))
    assert [type(event) for event in events] == [TextDelta, TextDelta, TextDelta, UtteranceDone]
    assert isinstance(events[-1], UtteranceDone) and events[-1].text == "tick tick tick "
