"""The level meter's readings from real fixture audio, chunk by chunk as the capture delivers it,
on a clock the test moves (20 ms a chunk)."""

from __future__ import annotations

import numpy as np
import pytest

from voxdesk.app.listening.capture import AudioLevel
from voxdesk.app.listening.level import FLOOR_DB, LevelWatch, MeterReading, decibels

CHUNK = 320  # 20 ms at 16 kHz, as the capture delivers


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def feed(watch: LevelWatch, clock: Clock, audio: np.ndarray) -> list[MeterReading]:
    readings = []
    for start in range(0, len(audio) - CHUNK + 1, CHUNK):
        clock.now += CHUNK / 16000
        readings.append(watch.add(AudioLevel.of(audio[start : start + CHUNK])))
    return readings


def test_decibels() -> None:
    assert decibels(1.0) == 0.0 and round(decibels(0.1)) == -20
    assert decibels(0.0) == decibels(1e-9) == FLOOR_DB


def test_speech_reads_in_the_speaking_range_and_the_peak_holds_then_falls(fixture_audio: dict[str, np.ndarray]) -> None:
    clock = Clock()
    watch = LevelWatch(clock)
    watch.start()
    readings = feed(watch, clock, fixture_audio["command00-slt"])
    loudest = max(r.rms_db for r in readings)
    assert -30 < loudest < -3, loudest
    assert max(r.peak_db for r in readings) > loudest + 3  # a peak is above the rms
    assert not any(r.clipping or r.no_sound for r in readings)
    peaks, hold = [r.peak_db for r in readings], int(1.5 * 50)
    for index, reading in enumerate(readings):  # the tick shows the loudest peak of the last 1.5 s, or more
        assert max(peaks[max(0, index - hold + 1) : index + 1]) <= reading.held_peak_db <= max(peaks[: index + 1])
    feed(watch, clock, fixture_audio["silence"][: 2 * 16000])
    held = watch.reading().held_peak_db
    clock.now += 0.5
    assert watch.reading().held_peak_db == pytest.approx(max(FLOOR_DB, held - 10))  # falling 20 dB a second


def test_silence_says_no_sound_after_four_seconds_and_speech_clears_it(fixture_audio: dict[str, np.ndarray]) -> None:
    clock = Clock()
    watch = LevelWatch(clock)
    watch.start()
    silence = feed(watch, clock, fixture_audio["silence"])  # 5 s of digital silence
    first_flag = next(i for i, r in enumerate(silence) if r.no_sound)
    assert abs(first_flag * CHUNK / 16000 - 4.0) < 0.05
    assert not feed(watch, clock, fixture_audio["command00-slt"])[-1].no_sound
    watch.stop()
    clock.now += 60
    assert watch.reading() == MeterReading()  # not listening: nothing to hint at


def test_quiet_noise_is_sound_but_an_overdriven_voice_clips(fixture_audio: dict[str, np.ndarray]) -> None:
    clock = Clock()
    watch = LevelWatch(clock)
    watch.start()
    quiet = fixture_audio["noise"] * (0.01 / max(1e-9, float(np.max(np.abs(fixture_audio["noise"])))))
    readings = feed(watch, clock, quiet)  # a peak around -40 dBFS: a live but quiet room
    assert not any(r.no_sound for r in readings)
    loud = np.clip(fixture_audio["command00-slt"] * 8, -1.0, 1.0)
    readings = feed(watch, clock, loud)
    assert readings[-1].clipping and max(r.rms_db for r in readings) > -6
    clock.now += 2.5
    assert not watch.reading().clipping  # the lamp stays lit for two seconds
