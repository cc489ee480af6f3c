"""What a VU-style level meter shows: levels in dBFS, a peak that holds then falls, clipping,
and whether the microphone has been silent long enough to say so. Qt-free; the window feeds it
each chunk's :class:`AudioLevel` and asks it again on a timer so the held peak can fall."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from voxdesk.app.listening.capture import AudioLevel

__all__ = ["CLIP_LEVEL", "FLOOR_DB", "LevelWatch", "MeterReading", "decibels"]

FLOOR_DB = -60.0
"""The bottom of the scale: anything quieter reads as the floor."""
CLIP_LEVEL = 0.99
"""A sample this close to full scale counts as clipped (-0.09 dBFS)."""
PEAK_HOLD_SECONDS = 1.5
PEAK_FALL_DB_PER_SECOND = 20.0
CLIP_HOLD_SECONDS = 2.0
NO_SOUND_SECONDS = 4.0


def decibels(linear: float) -> float:
    """A linear level (0 to 1) in dBFS, never below :data:`FLOOR_DB`."""
    return FLOOR_DB if linear <= 0 else max(FLOOR_DB, 20 * math.log10(linear))


@dataclass(frozen=True)
class MeterReading:
    """One frame of the meter, in dBFS."""

    rms_db: float = FLOOR_DB
    peak_db: float = FLOOR_DB
    held_peak_db: float = FLOOR_DB
    clipping: bool = False  # a clipped sample within the last CLIP_HOLD_SECONDS
    no_sound: bool = False  # nothing above the floor for NO_SOUND_SECONDS while listening


class LevelWatch:
    """Turns chunk levels into meter readings. Call :meth:`start` when listening starts."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, no_sound_seconds: float = NO_SOUND_SECONDS) -> None:
        self._clock = clock
        self.no_sound_seconds = no_sound_seconds
        self._last = MeterReading()
        self._held_db, self._held_at = FLOOR_DB, -math.inf
        self._clipped_at = -math.inf
        self._sound_at: float | None = None  # None: not listening

    def start(self) -> None:
        """Listening started: silence is counted from now."""
        self._sound_at = self._clock()

    def stop(self) -> None:
        """Listening stopped: the meter falls to the floor and no silence is reported."""
        self._sound_at = None
        self._last = MeterReading()
        self._held_db, self._held_at, self._clipped_at = FLOOR_DB, -math.inf, -math.inf

    def add(self, level: AudioLevel) -> MeterReading:
        """The reading after one chunk."""
        now = self._clock()
        peak_db = decibels(level.peak)
        if peak_db >= self._held_now(now):
            self._held_db, self._held_at = peak_db, now
        if level.peak >= CLIP_LEVEL:
            self._clipped_at = now
        if peak_db > FLOOR_DB and self._sound_at is not None:
            self._sound_at = now
        self._last = MeterReading(decibels(level.rms), peak_db)
        return self.reading()

    def reading(self) -> MeterReading:
        """The reading now: the last chunk's levels, with the held peak and flags brought up to date."""
        now = self._clock()
        silent = self._sound_at is not None and now - self._sound_at >= self.no_sound_seconds
        return MeterReading(
            self._last.rms_db,
            self._last.peak_db,
            max(self._held_now(now), self._last.peak_db),
            now - self._clipped_at <= CLIP_HOLD_SECONDS,
            silent,
        )

    def _held_now(self, now: float) -> float:
        falling = max(0.0, now - self._held_at - PEAK_HOLD_SECONDS)
        return max(FLOOR_DB, self._held_db - falling * PEAK_FALL_DB_PER_SECOND)
