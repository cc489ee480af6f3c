"""The delivery clock forgets what no latency is measured from any more."""

from __future__ import annotations

from voxdesk.engine.clock import DeliveryClock
from voxdesk.engine.session import SAMPLE_RATE


def _clock_of_one_hour() -> DeliveryClock:
    clock = DeliveryClock()
    chunk = SAMPLE_RATE // 50
    for index in range(1, 50 * 3600 + 1):
        clock.record(index * chunk, float(index))
    return clock


def test_forgetting_keeps_every_later_position_exact() -> None:
    clock = _clock_of_one_hour()
    later = [1800.0, 1800.01, 2500.5, 3599.99]
    before = [clock.delivered_at(t) for t in later]
    clock.forget_before(1800.0)
    assert [clock.delivered_at(t) for t in later] == before


def test_what_was_forgotten_is_no_longer_held() -> None:
    clock = _clock_of_one_hour()
    clock.forget_before(3599.0)
    # The earliest time still known is the one at 3599 s: the 179,950 positions before it are gone.
    assert clock.delivered_at(0.0) == clock.delivered_at(3599.0) == 50 * 3599.0
