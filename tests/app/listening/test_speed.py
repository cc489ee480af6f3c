"""When a model is too slow for the machine, from the latencies and decode times it measured."""

from __future__ import annotations

from voxdesk.app.listening.speed import SpeedWatch
from voxdesk.engine.events import UtteranceStats


def stats(audio: float, final_decode: float | None) -> UtteranceStats:
    return UtteranceStats(audio, final_decode, partial_decodes=2, final_decode_seconds=final_decode)


def test_three_slow_utterances_make_one_verdict_with_the_medians() -> None:
    watch = SpeedWatch(limit=1.5)
    assert watch.add(2.0, stats(2.0, 1.8)) is None
    assert watch.add(2.4, stats(4.0, 3.0)) is None
    verdict = watch.add(1.9, stats(1.0, 1.1))
    assert verdict is not None and verdict.too_slow
    assert verdict.final_latency == 2.0 and verdict.real_time_factor == 0.9
    assert "too slow for this machine" in verdict.message("Whisper small.en") and "0.90" in verdict.message("m")
    assert watch.add(2.2, stats(2.0, 1.8)) is None  # still slow: said once


def test_a_model_that_keeps_up_says_nothing_until_it_was_slow() -> None:
    watch = SpeedWatch(limit=1.5)
    for _ in range(5):
        assert watch.add(0.7, stats(2.0, 0.2)) is None
    for _ in range(2):
        watch.add(3.0, stats(2.0, 2.5))
    assert watch.add(0.6, stats(2.0, 0.2)) is None  # the median is still over the limit
    slow_then = [watch.add(0.6, stats(2.0, 0.2)) for _ in range(2)]
    recovered = [verdict for verdict in slow_then if verdict is not None]
    assert len(recovered) == 1 and not recovered[0].too_slow


def test_short_utterances_and_engines_without_decode_times_are_not_judged() -> None:
    watch = SpeedWatch(limit=0.0)
    for _ in range(4):
        assert watch.add(3.0, stats(0.3, 0.5)) is None
        assert watch.add(3.0, stats(2.0, None)) is None
