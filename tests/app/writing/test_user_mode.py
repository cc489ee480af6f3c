"""The [writing] settings: read from a real settings.toml, turned into the mode they ask for."""

from __future__ import annotations

from pathlib import Path

from voxdesk.app.settings import WritingSettings, load_settings, save_settings
from voxdesk.app.writing.pipeline import write_text
from voxdesk.app.writing.replacements import Replacement
from voxdesk.app.writing.user_mode import user_mode
from voxdesk.app.writing.vocabulary import VocabularyEntry


def test_settings_give_the_mode_with_the_users_words(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text(
        '[writing]\nmode = "message"\nvocabulary = ["Xochitl = so chee tl"]\nreplacements = ["btw => by the way"]\n',
        encoding="utf-8",
    )
    settings, warnings = load_settings(path)
    mode, problems = user_mode(settings.writing)
    assert warnings == [] and problems == []
    assert mode.name == "message"
    assert mode.vocabulary == (VocabularyEntry("Xochitl", ("so chee tl",)),)
    assert mode.replacements == (Replacement("btw", "by the way"),)
    assert write_text("Btw, ask Zacha tool.", mode) == "By the way, ask Xochitl"


def test_a_name_given_wins_over_the_settings_mode() -> None:
    mode, problems = user_mode(WritingSettings(mode="message"), "code")
    assert mode.name == "code" and problems == []


def test_the_writing_settings_survive_a_save(tmp_path: Path) -> None:
    settings, _ = load_settings(tmp_path / "none.toml")
    settings.writing.vocabulary = ["Siobhan = shiv awn"]
    settings.writing.replacements = ["[match case] US => United States"]
    path = save_settings(settings, tmp_path / "settings.toml")
    assert load_settings(path) == (settings, [])


def test_each_bad_setting_is_one_warning_and_the_rest_still_counts() -> None:
    settings = WritingSettings(
        mode="poetry",
        vocabulary=["Xochitl", "= oops", 42, "two\nlines", "Siobhan"],  # type: ignore[list-item]  # as a hand-edited file can have it
        replacements=["btw => by the way", "no arrow"],
    )
    mode, problems = user_mode(settings)
    assert mode.name == "plain"
    assert [entry.text for entry in mode.vocabulary] == ["Xochitl", "Siobhan"]
    assert mode.replacements == (Replacement("btw", "by the way"),)
    assert [problem.split(":")[0] for problem in problems] == [
        "ignored writing.mode",
        "ignored writing.vocabulary item 3",
        "ignored writing.vocabulary item 4",
        "ignored writing.vocabulary item 2",
        "ignored writing.replacements item 2",
    ]
