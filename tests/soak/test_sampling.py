"""The soaks' arithmetic: the least-squares slope, the warm-up left out, and bounds that fail."""

from __future__ import annotations

import os

from tests.soak.sampling import Bound, SoakResult, fit_slope, process_resources

LEAK = Bound("rss_mib", "MiB", per_hour=10.0, floor=5.0, why="test")


def test_the_slope_of_a_noisy_line_is_its_rise_per_hour() -> None:
    xs = [i / 10 for i in range(50)]
    ys = [100 + 20 * x + (1 if i % 2 else -1) for i, x in enumerate(xs)]
    assert abs(fit_slope(xs, ys) - 20) < 0.2
    assert fit_slope([1.0], [5.0]) == 0.0
    assert fit_slope([1.0, 1.0], [5.0, 9.0]) == 0.0


def soak(values: list[float], hours: float) -> SoakResult:
    result = SoakResult("test", "wall clock", [LEAK])
    for i, value in enumerate(values):
        result.add(hours * i / (len(values) - 1), {"rss_mib": value})
    return result


def test_growth_beyond_the_floor_and_the_hourly_allowance_fails_and_the_warm_up_does_not_count() -> None:
    warm_up = [0.0, 300.0, 300.0]  # the first 15 %: a model loading
    flat = soak(warm_up + [300.0] * 17, hours=2.0)
    assert flat.passed, flat.report()
    leaking = soak(warm_up + [300.0 + 2 * i for i in range(17)], hours=2.0)  # 32 MiB in 1.7 h
    [verdict] = leaking.verdicts()
    assert not verdict.passed and not leaking.passed
    assert abs(verdict.slope - 19) < 0.01  # 2 MiB a step of 2/19 h
    assert "FAIL" in leaking.report() and "soak test: FAILED" in leaking.report()


def test_a_failed_check_fails_the_soak() -> None:
    result = soak([1.0] * 10, hours=1.0)
    result.check("history rows", False, "3 rows written, 4 utterances final")
    assert not result.passed
    assert "history rows" in result.report()


def test_resources_of_this_process_count_its_descriptors() -> None:
    before = process_resources()
    read, write = os.pipe()
    try:
        assert process_resources()["fds"] == before["fds"] + 2
    finally:
        os.close(read)
        os.close(write)
    assert before["rss_mib"] > 1 and before["threads"] >= 1
