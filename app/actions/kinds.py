"""The closed sets of values voice actions work with, as enums (their values are the names used in files)."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

__all__ = ["Action", "ActionMode", "RecordSource", "SlotKind", "SlotValue"]

SlotValue = str | int | float

# How a record came about: a phrase matched, an LLM guessed, or dictated text.
RecordSource = Literal["phrase", "llm", "dictation"]


class Action(StrEnum):
    """What a command does; the value is its name in command files."""

    OPEN_APP = "open_app"
    OPEN_URL = "open_url"
    SEARCH = "search"
    TYPE = "type"
    PRESS = "press"
    COPY = "copy"
    TIMER = "timer"
    STOP_LISTENING = "stop_listening"
    SCRATCH = "scratch"
    SET_MODE = "set_mode"
    RUN = "run"
    ANSWER = "answer"
    EDIT = "edit"
    PLAN = "plan"  # several commands said as one request; no command file names it


class ActionMode(StrEnum):
    """Command mode acts on commands only; dictation mode types everything else."""

    COMMAND = "command"
    DICTATION = "dictation"


class SlotKind(StrEnum):
    """The type of a slot in a phrase; ENUM holds its choices in ``Slot.options``."""

    TEXT = "text"
    RAW = "raw"
    NUMBER = "number"
    KEYS = "keys"
    ENUM = "enum"
