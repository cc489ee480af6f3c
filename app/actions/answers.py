"""Questions Voxdesk answers from its own state, without an LLM: the time, the date, the timers."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

__all__ = ["Question", "RunningTimer", "answer"]


class Question(StrEnum):
    """What the ``answer`` action is asked; the value is its name in command files."""

    TIME = "time"
    DATE = "date"
    TIMERS = "timers"


@dataclass(frozen=True)
class RunningTimer:
    """A timer that has not gone off: what it was set for, and when it goes off (clock seconds)."""

    label: str
    due: float


def answer(question: Question, now: float, timers: Iterable[RunningTimer] = ()) -> str:
    """The answer to ``question`` at ``now`` (seconds since the epoch), in one sentence."""
    local = time.localtime(now)
    if question is Question.TIME:
        # The 12-hour clock, as English speaks it: also what a synthesized voice says most clearly.
        meridiem = "AM" if local.tm_hour < 12 else "PM"
        return f"It is {local.tm_hour % 12 or 12}:{local.tm_min:02d} {meridiem}."
    if question is Question.DATE:
        return f"It is {time.strftime('%A', local)}, {local.tm_mday} {time.strftime('%B %Y', local)}."
    left = sorted(timers, key=lambda timer: timer.due)
    if not left:
        return "No timer is running."
    return " ".join(f"{_remaining(timer.due - now)} left of the timer for {timer.label}." for timer in left)


def _remaining(seconds: float) -> str:
    """``1 h 5 min``, ``4 min 12 s`` or ``12 s``."""
    whole = max(0, round(seconds))
    hours, minutes, rest = whole // 3600, whole // 60 % 60, whole % 60
    if hours:
        return f"{hours} h {minutes} min"
    return f"{minutes} min {rest} s" if minutes else f"{rest} s"
