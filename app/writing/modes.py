"""Modes: named ways of writing dictated text, each with its formatting steps, vocabulary,
replacement rules and the LLM's cleanup.

:data:`DEFAULT_MODES` are built in; :func:`mode_named` picks one by name. A mode lists the
window classes or process names of the applications it is meant for (``app_classes``), for
picking it by the focused application (:mod:`voxdesk.app.actions.focus`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from voxdesk.app.writing.numbers import NUMBER_TABLES
from voxdesk.app.writing.punctuation import PUNCTUATION_TABLES
from voxdesk.app.writing.replacements import Replacement
from voxdesk.app.writing.vocabulary import VocabularyEntry

__all__ = ["DEFAULT_MODES", "CleanupStyle", "Mode", "Step", "mode_named"]


class CleanupStyle(StrEnum):
    """How a mode has the model clean up dictation; the value is its name in settings."""

    NONE = "none"
    LIGHT = "light"  # fillers and false starts out, punctuation and capitals fixed
    FORMAL = "formal"  # as light, in a formal register
    CUSTOM = "custom"  # the mode's own prompt


class Step(StrEnum):
    """One formatting step. Steps always run in this order, whichever a mode takes."""

    NO_AUTO_PUNCTUATION = "no-auto-punctuation"  # drop the recognizer's own punctuation
    VOCABULARY = "vocabulary"  # near misses of vocabulary entries corrected
    SPOKEN_PUNCTUATION = "spoken-punctuation"  # "comma", "new paragraph", "all caps" written out
    NUMBERS = "numbers"  # "three thirty pm" -> "3:30 PM"
    REPLACEMENTS = "replacements"  # the mode's rules, then the user's
    NO_TRAILING_PERIOD = "no-trailing-period"
    NO_START_CAPITAL = "no-start-capital"


@dataclass(frozen=True)
class Mode:
    """A named way of writing: which steps run, with which words and rules, in which language."""

    name: str
    description: str
    steps: frozenset[Step]
    vocabulary: tuple[VocabularyEntry, ...] = ()
    replacements: tuple[Replacement, ...] = ()
    app_classes: tuple[str, ...] = ()  # e.g. "gnome-terminal-server", "Slack": the apps it is for
    language: str = "en"  # the tables of spoken punctuation and numbers it uses
    live_typing: bool = True  # typed while spoken; off where keystrokes have side effects (terminals)
    cleanup: CleanupStyle = CleanupStyle.NONE  # what the LLM does to the final text (not with live typing)
    cleanup_prompt: str = ""  # the instructions of CleanupStyle.CUSTOM

    def __post_init__(self) -> None:
        if self.language not in PUNCTUATION_TABLES or self.language not in NUMBER_TABLES:
            raise ValueError(f"mode {self.name!r}: no tables for language {self.language!r}")

    def adding(self, vocabulary: Iterable[VocabularyEntry] = (), replacements: Iterable[Replacement] = ()) -> Mode:
        """This mode with more vocabulary entries and rules after its own (an entry it already has stays once)."""
        known = {entry.text.casefold() for entry in self.vocabulary}
        extra = tuple(entry for entry in vocabulary if entry.text.casefold() not in known)
        return dataclasses.replace(
            self, vocabulary=self.vocabulary + extra, replacements=self.replacements + tuple(replacements)
        )


_WORDS = frozenset({Step.VOCABULARY, Step.REPLACEMENTS})
_DICTATION = _WORDS | {Step.SPOKEN_PUNCTUATION, Step.NUMBERS}

DEFAULT_MODES = (
    Mode("plain", "the recognizer's text, with your vocabulary and replacements", _WORDS),
    Mode("prose", "documents and email: spoken punctuation, numbers as digits", _DICTATION),
    Mode(
        "clean",
        "as prose, then fillers and false starts taken out by the LLM (not typed while you speak)",
        _DICTATION,
        live_typing=False,
        cleanup=CleanupStyle.LIGHT,
    ),
    Mode(
        "message",
        "chat: as prose, without a period at the end",
        _DICTATION | {Step.NO_TRAILING_PERIOD},
        app_classes=("Slack", "discord", "Signal", "TelegramDesktop", "Telegram", "Element"),
    ),
    Mode(
        "code",
        "terminals and editors: no punctuation of the recognizer's, no capital at the start",
        _WORDS | {Step.NO_AUTO_PUNCTUATION, Step.NO_START_CAPITAL},
        app_classes=(
            "gnome-terminal-server",
            "konsole",
            "xterm",
            "Alacritty",
            "kitty",
            "Code",
            "Terminal",  # macOS
            "iTerm2",
            "WindowsTerminal",
        ),
        live_typing=False,
    ),
)


def mode_named(name: str, modes: Iterable[Mode] = DEFAULT_MODES) -> Mode | None:
    """The mode called ``name`` (any case), or ``None``."""
    return next((mode for mode in modes if mode.name.casefold() == name.strip().casefold()), None)
