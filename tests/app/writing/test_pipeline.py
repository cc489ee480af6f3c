"""Modes and the pipeline: each built-in mode on the same dictated texts, row by row."""

from __future__ import annotations

import dataclasses

import pytest

from voxdesk.app.writing.modes import DEFAULT_MODES, Mode, Step, mode_named
from voxdesk.app.writing.pipeline import write_text
from voxdesk.app.writing.replacements import Replacement
from voxdesk.app.writing.vocabulary import VocabularyEntry

SAID = "Remind me to call Zacha tool at three thirty pm comma, then period. Btw, twenty five percent."

WRITTEN = {
    "plain": "Remind me to call Xochitl at three thirty pm comma, then period. By the way, twenty five percent.",
    "prose": "Remind me to call Xochitl at 3:30 PM, then. By the way, 25%.",
    "message": "Remind me to call Xochitl at 3:30 PM, then. By the way, 25%",
    "code": "remind me to call Xochitl at three thirty pm comma then period By the way twenty five percent",
}


def _mode(name: str) -> Mode:
    mode = mode_named(name)
    assert mode is not None
    return mode.adding([VocabularyEntry("Xochitl", ("so chee tl",))], [Replacement("btw", "by the way")])


@pytest.mark.parametrize("name", WRITTEN)
def test_each_mode_writes_its_way(name: str) -> None:
    assert write_text(SAID, _mode(name)) == WRITTEN[name]


def test_code_mode_writes_a_command_as_typed_in_a_terminal() -> None:
    assert write_text("Git status.", _mode("code")) == "git status"


def test_steps_run_in_one_order_whatever_the_mode_lists() -> None:
    # Replacements come after numbers: a rule can match what the numbers step wrote.
    mode = Mode("t", "", frozenset({Step.REPLACEMENTS, Step.NUMBERS}), replacements=(Replacement("25%", "a quarter"),))
    assert write_text("twenty five percent", mode) == "a quarter"


def test_modes_are_named_case_insensitively_and_an_unknown_name_is_none() -> None:
    assert [mode_named(m.name.upper()) for m in DEFAULT_MODES] == list(DEFAULT_MODES)
    assert mode_named("poetry") is None


def test_adding_words_keeps_the_modes_own_first_and_each_entry_once() -> None:
    base = dataclasses.replace(DEFAULT_MODES[0], vocabulary=(VocabularyEntry("Xochitl"),))
    mode = base.adding([VocabularyEntry("xochitl", ("so chee tl",)), VocabularyEntry("Siobhan")])
    assert mode.vocabulary == (VocabularyEntry("Xochitl"), VocabularyEntry("Siobhan"))


def test_a_mode_without_tables_for_its_language_is_refused() -> None:
    with pytest.raises(ValueError, match="'xx'"):
        Mode("klingon", "", frozenset(), language="xx")


def test_terminal_and_chat_modes_name_the_apps_they_are_for() -> None:
    by_name = {mode.name: mode for mode in DEFAULT_MODES}
    assert "xterm" in by_name["code"].app_classes and "Slack" in by_name["message"].app_classes
