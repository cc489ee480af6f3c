"""The [writing] settings: read from a real settings.toml, turned into the mode they ask for."""

from __future__ import annotations

from pathlib import Path

from voxdesk.app.settings import WritingSettings, load_settings, save_settings
from voxdesk.app.writing.pipeline import write_text
from voxdesk.app.writing.replacements import Replacement
from voxdesk.app.writing.user_mode import every_mode_vocabulary, user_mode
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


def test_a_modes_own_words_apply_in_that_mode_only(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text(
        '[writing]\nvocabulary = ["Xochitl = so chee tl"]\n'
        '[writing.mode_vocabulary]\ncode = ["kubectl = cube control"]\n'
        '[writing.mode_replacements]\ncode = ["dash dash => --"]\n',
        encoding="utf-8",
    )
    settings, warnings = load_settings(path)
    code, problems = user_mode(settings.writing, "code")
    plain, _ = user_mode(settings.writing, "plain")
    assert warnings == problems == []
    assert [entry.text for entry in code.vocabulary] == ["Xochitl", "kubectl"]
    assert [entry.text for entry in plain.vocabulary] == ["Xochitl"]
    assert write_text("run cube control get pods dash dash all", code) == "run kubectl get pods -- all"
    assert write_text("Run cube control, dash dash all.", plain) == "Run cube control, dash dash all."
    assert every_mode_vocabulary(settings.writing) == ("Xochitl", "kubectl")


def test_words_and_apps_of_a_mode_that_does_not_exist_are_warnings() -> None:
    settings = WritingSettings(mode_vocabulary={"poetry": ["Keats"]}, app_modes={"Gedit": "poetry", "Slack": "prose"})
    mode, problems = user_mode(settings)
    assert [entry.text for entry in mode.vocabulary] == []
    assert problems == [
        "ignored the words of mode 'poetry': it is not one of plain, prose, clean, message, code",
        "ignored writing.app_modes.Gedit: 'poetry' is not one of plain, prose, clean, message, code",
    ]
    assert [problem for problem in user_mode(WritingSettings(mode_vocabulary={"code": ["= x"]}), "code")[1]] == [
        "ignored writing.mode_vocabulary.code item 1: no word before '=': '= x'"
    ]


def test_live_typing_is_the_modes_own_unless_the_settings_say_otherwise() -> None:
    settings = WritingSettings(live_typing={"code": True, "message": False, "poetry": True})
    assert user_mode(settings, "code")[0].live_typing and not user_mode(settings, "message")[0].live_typing
    assert user_mode(settings, "prose")[0].live_typing and not user_mode(WritingSettings(), "code")[0].live_typing
    assert user_mode(settings, "prose")[1] == [
        "ignored writing.live_typing.poetry: it is not one of plain, prose, clean, message, code"
    ]
