import asyncio

import numpy as np
import pytest

from tests.speech_fixtures import Fixture
from voxdesk.app.files.pacing import paced_chunks
from voxdesk.app.files.transcription import percentile, transcribe_audio
from voxdesk.engine.clock import DeliveryClock
from voxdesk.engine.whisper.builtin import BuiltinEngine


def test_delivery_clock_answers_when_a_position_was_handed_over() -> None:
    clock = DeliveryClock()
    clock.record(1600, 10.0)
    clock.record(3200, 10.1)
    assert clock.delivered_at(0.0) == 10.0
    assert clock.delivered_at(0.1) == 10.0
    assert clock.delivered_at(0.15) == 10.1
    assert clock.delivered_at(99.0) == 10.1


def test_paced_chunks_cover_the_audio_and_keep_real_time_pace() -> None:
    audio = np.arange(8000, dtype=np.float32)
    clock = DeliveryClock()

    async def collect() -> list[np.ndarray]:
        return [c async for c in paced_chunks(audio, clock, chunk_seconds=0.1, realtime=True)]

    chunks = asyncio.run(collect())
    assert np.array_equal(np.concatenate(chunks), audio)
    assert [len(c) for c in chunks] == [1600] * 5
    assert clock.delivered_at(0.5) - clock.delivered_at(0.1) >= 0.39


def test_percentile() -> None:
    assert percentile([], 50) is None
    assert percentile([3.0], 90) == 3.0
    assert percentile([1.0, 2.0, 3.0, 4.0, 5.0], 50) == 3.0
    assert percentile([float(i) for i in range(1, 11)], 90) == pytest.approx(9.1)


def test_real_time_report_has_latencies_and_costs(
    engine: BuiltinEngine, speech: dict[str, Fixture], fixture_audio: dict[str, np.ndarray]
) -> None:
    report = asyncio.run(transcribe_audio(engine, fixture_audio["command09-slt"], realtime=True))
    summary = report.summary()
    assert summary["utterances"] == 1
    assert report.wall_seconds >= speech["command09-slt"].duration - 0.1  # real-time pace
    first, final = summary["first_partial_latency_median_s"], summary["final_latency_median_s"]
    assert isinstance(first, float) and isinstance(final, float)
    assert first > 0 and final > 0
    speed, cost = summary["real_time_factor"], summary["cpu_seconds_per_audio_second"]
    assert isinstance(speed, float) and isinstance(cost, float)
    assert speed > 0 and cost > 0
