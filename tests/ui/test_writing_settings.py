"""The Writing page of the settings: every mode's and one mode's words, vocabulary files in and
out, and the test bench writing a sentence with the rules as they are typed."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QKeySequence
from pytestqt.qtbot import QtBot

from voxdesk.app.settings import Settings, WritingSettings, load_settings, save_settings
from voxdesk.app.writing.vocabulary import read_vocabulary_file
from voxdesk.ui.settings_dialog import SettingsDialog
from voxdesk.ui.writing_settings import WritingPage


def page(qtbot: QtBot, settings: WritingSettings) -> WritingPage:
    writing = WritingPage(settings)
    qtbot.addWidget(writing)
    return writing


def test_every_modes_words_and_one_modes_words_are_edited_apart(qtbot: QtBot, tmp_path: Path) -> None:
    original = WritingSettings(
        vocabulary=["Kubernetes"],
        mode_vocabulary={"message": ["Grafana"]},
        app_modes={"Gedit": "prose", "Mutt": "code"},
    )
    writing = page(qtbot, original)
    assert not any(
        w.isEnabled()
        for w in (writing.mode_shortcut, writing.mode_apps, writing.mode_live_typing, writing.mode_cleanup)
    )
    assert writing.vocabulary.toPlainText() == "Kubernetes" and writing.vocabulary_note.text() == "1 entry"
    writing.vocabulary.appendPlainText("Xochitl = so chee tl")
    writing.replacements.setPlainText("btw => by the way")
    writing.words_for.setCurrentIndex(writing.words_for.findData("code"))
    assert writing.vocabulary.toPlainText() == "" and writing.replacements.toPlainText() == ""
    assert writing.mode_apps.text() == "Mutt" and "besides gnome-terminal-server" in writing.mode_apps.placeholderText()
    writing.vocabulary.setPlainText("kubectl = cube control")
    writing.mode_shortcut.setKeySequence(QKeySequence("Ctrl+Alt+C"))
    writing.mode_apps.setText("Emacs, ")
    assert not writing.mode_live_typing.isChecked()  # code does not type live unless asked
    writing.mode_live_typing.setChecked(True)
    writing.mode_cleanup.setCurrentIndex(writing.mode_cleanup.findData("custom"))
    writing.mode_cleanup_prompt.setText("Keep shell commands exact.")
    writing.words_for.setCurrentIndex(writing.words_for.findData("message"))
    assert writing.vocabulary.toPlainText() == "Grafana" and writing.vocabulary_note.text() == "1 entry"
    assert writing.mode_live_typing.isChecked()  # message types live; left so, nothing is written for it
    writing.vocabulary.setPlainText("")
    writing.default_mode.setCurrentIndex(writing.default_mode.findData("prose"))

    edited = writing.writing_settings()
    assert edited.mode == "prose"
    assert edited.vocabulary == ["Kubernetes", "Xochitl = so chee tl"]
    assert edited.replacements == ["btw => by the way"]
    assert edited.mode_vocabulary == {"code": ["kubectl = cube control"]}  # message's only word was cleared
    assert edited.mode_shortcuts == {"code": "Ctrl+Alt+C"} and edited.app_modes == {"Gedit": "prose", "Emacs": "code"}
    assert edited.live_typing == {"code": True}
    assert edited.cleanup == {"code": "custom"} and edited.cleanup_prompts == {"code": "Keep shell commands exact."}
    assert original.mode_vocabulary == {"message": ["Grafana"]} and original.mode == "plain"
    path = save_settings(Settings(writing=edited), tmp_path / "settings.toml")
    assert load_settings(path)[0].writing == edited


def test_the_test_bench_writes_in_the_mode_shown_with_the_rules_being_typed(qtbot: QtBot) -> None:
    writing = page(qtbot, WritingSettings(mode="prose", mode_vocabulary={"code": ["kubectl = cube control"]}))
    writing.trial.setText("btw ask so chee tl comma then run cube control")
    assert writing.trial_result.text() == "btw ask so chee tl, then run cube control   (prose mode)"
    writing.vocabulary.setPlainText("Xochitl = so chee tl")
    writing.replacements.setPlainText("btw => by the way")
    assert writing.trial_result.text() == "by the way ask Xochitl, then run cube control   (prose mode)"
    writing.words_for.setCurrentIndex(writing.words_for.findData("code"))
    assert writing.trial_result.text() == "by the way ask Xochitl comma then run kubectl   (code mode)"


def test_a_line_that_is_no_entry_or_rule_is_named_under_its_list(qtbot: QtBot) -> None:
    writing = page(qtbot, WritingSettings())
    writing.vocabulary.setPlainText("Kubernetes\n= oops\nKubernetes")
    writing.replacements.setPlainText("btw => by the way\nno arrow")
    assert writing.vocabulary_note.text().startswith("1 entry; not used: line 2: no word before '='")
    assert "line 3: 'Kubernetes' is already listed on line 1" in writing.vocabulary_note.text()
    assert writing.replacements_note.text().startswith("1 rule; not used: line 2:")


def test_a_vocabulary_file_is_imported_and_exported(qtbot: QtBot, tmp_path: Path) -> None:
    writing = page(qtbot, WritingSettings(vocabulary=["Kubernetes"]))
    bulk = tmp_path / "words.txt"
    bulk.write_text("# from the team wiki\nkubernetes\nSiobhan = shiv awn\n= broken\nCloudflare Workers\n", "utf-8")
    writing.import_vocabulary(bulk)
    assert writing.vocabulary.toPlainText() == "Kubernetes\nSiobhan = shiv awn\nCloudflare Workers"
    assert writing.vocabulary_note.text().startswith("Imported 2 new entries from words.txt; 1 lines skipped")
    exported = tmp_path / "out" / "vocabulary.txt"
    exported.parent.mkdir()
    writing.export_vocabulary(exported)
    entries, problems = read_vocabulary_file(exported)
    assert [entry.line for entry in entries] == ["Kubernetes", "Siobhan = shiv awn", "Cloudflare Workers"]
    assert problems == [] and writing.vocabulary_note.text() == f"Exported 3 entries to {exported}"


def test_a_vocabulary_file_that_is_not_text_or_not_there_changes_nothing(qtbot: QtBot, tmp_path: Path) -> None:
    writing = page(qtbot, WritingSettings(vocabulary=["Kubernetes"]))
    binary = tmp_path / "words.txt"
    binary.write_bytes(b"\xff\xfe\x00K\x00u")
    writing.import_vocabulary(binary)
    assert writing.vocabulary_note.text() == f"Could not import {binary}: it is not UTF-8 text"
    writing.import_vocabulary(tmp_path / "gone.txt")
    assert writing.vocabulary_note.text() == f"Could not import {tmp_path / 'gone.txt'}: No such file or directory"
    writing.export_vocabulary(tmp_path / "no-folder" / "v.txt")
    assert writing.vocabulary_note.text().startswith(f"Could not export to {tmp_path / 'no-folder' / 'v.txt'}: No such")
    assert writing.vocabulary.toPlainText() == "Kubernetes"


def test_the_dialog_hands_back_the_writing_page(qtbot: QtBot) -> None:
    dialog = SettingsDialog(Settings(), [])
    qtbot.addWidget(dialog)
    dialog.writing.vocabulary.setPlainText("Grafana")
    assert dialog.settings().writing.vocabulary == ["Grafana"]
    assert dialog.pages.tabText(1) == "&Writing"


def test_the_clean_mode_shows_its_light_cleanup_and_leaves_it_unwritten(qtbot: QtBot) -> None:
    writing = page(qtbot, WritingSettings())
    writing.words_for.setCurrentIndex(writing.words_for.findData("clean"))
    assert writing.mode_cleanup.currentData() == "light" and writing.mode_cleanup.isEnabled()
    assert writing.writing_settings().cleanup == {}
