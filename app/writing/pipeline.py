"""The one way a mode writes a final text: its steps, in :class:`~voxdesk.app.writing.modes.Step` order."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from voxdesk.app.writing.correction import VocabularyCorrector
from voxdesk.app.writing.modes import Mode, Step
from voxdesk.app.writing.numbers import NUMBER_TABLES, format_numbers
from voxdesk.app.writing.punctuation import PUNCTUATION_TABLES, apply_spoken_punctuation
from voxdesk.app.writing.replacements import apply_replacements
from voxdesk.app.writing.tidy import drop_auto_punctuation, drop_start_capital, drop_trailing_period
from voxdesk.app.writing.vocabulary import VocabularyEntry

__all__ = ["write_text"]


@lru_cache(maxsize=8)
def _corrector(vocabulary: tuple[VocabularyEntry, ...]) -> VocabularyCorrector:
    return VocabularyCorrector(vocabulary)


_STEPS: dict[Step, Callable[[str, Mode], str]] = {
    Step.NO_AUTO_PUNCTUATION: lambda text, _: drop_auto_punctuation(text),
    Step.VOCABULARY: lambda text, mode: _corrector(mode.vocabulary).correct(text),
    Step.SPOKEN_PUNCTUATION: lambda text, mode: apply_spoken_punctuation(text, PUNCTUATION_TABLES[mode.language]),
    Step.NUMBERS: lambda text, mode: format_numbers(text, NUMBER_TABLES[mode.language]),
    Step.REPLACEMENTS: lambda text, mode: apply_replacements(text, mode.replacements),
    Step.NO_TRAILING_PERIOD: lambda text, _: drop_trailing_period(text),
    Step.NO_START_CAPITAL: lambda text, _: drop_start_capital(text),
}


def write_text(text: str, mode: Mode) -> str:
    """``text`` (one utterance's final text) as ``mode`` writes it."""
    for step in Step:
        if step in mode.steps:
            text = _STEPS[step](text, mode)
    return text
