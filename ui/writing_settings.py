"""The Writing page of the settings: the default mode; the vocabulary and replacement rules of
every mode or of one, and a mode's shortcut, applications, live typing and LLM cleanup;
vocabulary import and export; and a test bench that shows what a mode writes for a sentence
with the rules as they are edited (the LLM's cleanup is not run there)."""

from __future__ import annotations

import copy
from pathlib import Path

from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QKeySequenceEdit,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QWidget,
)

from voxdesk.app.settings import WritingSettings
from voxdesk.app.writing.modes import DEFAULT_MODES, CleanupStyle, Mode
from voxdesk.app.writing.pipeline import write_text
from voxdesk.app.writing.replacements import parse_replacements
from voxdesk.app.writing.user_mode import user_mode
from voxdesk.app.writing.vocabulary import (
    VocabularyEntry,
    parse_vocabulary,
    read_vocabulary_file,
    write_vocabulary_file,
)

__all__ = ["EVERY_MODE", "WritingPage"]

EVERY_MODE = ""
"""The ``words_for`` choice whose lists apply in every mode (``[writing]`` itself)."""

_CLEANUP_LABELS = {
    CleanupStyle.NONE: "None",
    CleanupStyle.LIGHT: "Light: fillers and false starts out, punctuation fixed",
    CleanupStyle.FORMAL: "Formal",
    CleanupStyle.CUSTOM: "Custom: the instructions below",
}
_FILE_FILTER = "Vocabulary files (*.txt);;All files (*)"


class WritingPage(QWidget):
    """Edits a copy of the ``[writing]`` settings; :meth:`writing_settings` returns it."""

    def __init__(self, settings: WritingSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._settings = copy.deepcopy(settings)
        self._shown = EVERY_MODE  # whose lists the editors hold
        form = QFormLayout(self)

        self.default_mode = QComboBox()
        self.default_mode.setAccessibleName("Default writing mode")
        for mode in DEFAULT_MODES:
            self.default_mode.addItem(f"{mode.name}: {mode.description}", mode.name)
        self.default_mode.setCurrentIndex(max(0, self.default_mode.findData(settings.mode)))
        form.addRow("&Default mode", self.default_mode)

        self.words_for = QComboBox()
        self.words_for.setAccessibleName("Words and rules for")
        self.words_for.addItem("Every mode", EVERY_MODE)
        for mode in DEFAULT_MODES:
            self.words_for.addItem(f"The {mode.name} mode only", mode.name)
        form.addRow("&Words and rules for", self.words_for)

        self.mode_shortcut = QKeySequenceEdit()
        self.mode_shortcut.setAccessibleName("Shortcut that writes in this mode")
        self.mode_shortcut.setToolTip(
            "Pressed anywhere: the next utterances are written in this mode; again: by the app"
        )
        form.addRow("Mode s&hortcut", self.mode_shortcut)
        self.mode_apps = QLineEdit()
        self.mode_apps.setAccessibleName("Applications written in this mode")
        form.addRow("Mode's a&pplications", self.mode_apps)
        self.mode_live_typing = QCheckBox("Type while I speak (off where keystrokes do things, as in terminals)")
        self.mode_live_typing.setAccessibleName("This mode types while you speak")
        form.addRow("", self.mode_live_typing)
        self.mode_cleanup = QComboBox()
        self.mode_cleanup.setAccessibleName("How the LLM cleans up this mode's text")
        for style, label in _CLEANUP_LABELS.items():
            self.mode_cleanup.addItem(label, style)
        form.addRow("LLM &cleanup", self.mode_cleanup)
        self.mode_cleanup_prompt = QLineEdit()
        self.mode_cleanup_prompt.setAccessibleName("This mode's own cleanup instructions")
        self.mode_cleanup_prompt.setPlaceholderText("for Custom: e.g. Write it as a short, friendly chat message.")
        form.addRow("Cleanup in&structions", self.mode_cleanup_prompt)

        self.vocabulary = QPlainTextEdit()
        self.vocabulary.setAccessibleName("Vocabulary, one entry a line")
        self.vocabulary.setPlaceholderText("Kubernetes\nXochitl = so chee tl, so cheetle\nCloudflare Workers")
        self.vocabulary.setToolTip("One word or phrase a line; after '=', how it sounds, spelled as English words")
        form.addRow("&Vocabulary", self.vocabulary)
        self.vocabulary_note = QLabel()
        self.vocabulary_note.setWordWrap(True)
        import_button = QPushButton("&Import…")
        import_button.clicked.connect(self._choose_import)
        export_button = QPushButton("E&xport…")
        export_button.clicked.connect(self._choose_export)
        row = QHBoxLayout()
        row.addWidget(self.vocabulary_note, 1)
        row.addWidget(import_button)
        row.addWidget(export_button)
        form.addRow("", row)

        self.replacements = QPlainTextEdit()
        self.replacements.setAccessibleName("Replacement rules, one a line")
        self.replacements.setPlaceholderText("btw => by the way\n[match case] US => United States")
        self.replacements.setToolTip(
            "say => write, a rule a line; [match case] and [anywhere] before a rule change how it matches"
        )
        form.addRow("&Replacements", self.replacements)
        self.replacements_note = QLabel()
        self.replacements_note.setWordWrap(True)
        form.addRow("", self.replacements_note)

        self.trial = QLineEdit()
        self.trial.setAccessibleName("Try a sentence")
        self.trial.setPlaceholderText("say something the rules should change, e.g. btw ask so chee tl comma ok")
        form.addRow("&Try a sentence", self.trial)
        self.trial_result = QLabel()
        self.trial_result.setAccessibleName("What the mode writes")
        self.trial_result.setWordWrap(True)
        form.addRow("Writes", self.trial_result)

        self._show_lists()
        self.words_for.currentIndexChanged.connect(self._switch_lists)
        self.default_mode.currentIndexChanged.connect(self._update_trial)
        self.vocabulary.textChanged.connect(self._check_vocabulary)
        self.replacements.textChanged.connect(self._check_replacements)
        self.trial.textChanged.connect(self._update_trial)

    def writing_settings(self) -> WritingSettings:
        """The edited ``[writing]`` settings."""
        result = self._edited()
        result.mode = self.default_mode.currentData()
        return result

    def import_vocabulary(self, path: Path) -> None:
        """Add the entries of the vocabulary file ``path`` not listed yet; a file that cannot be
        read says so below the list and changes nothing."""
        try:
            entries, problems = read_vocabulary_file(path)
        except (OSError, UnicodeDecodeError) as error:
            reason = "it is not UTF-8 text" if isinstance(error, UnicodeDecodeError) else error.strerror or str(error)
            self.vocabulary_note.setText(f"Could not import {path}: {reason}")
            return
        listed = {entry.text.casefold() for entry in self._entries()}
        new = [entry.line for entry in entries if entry.text.casefold() not in listed]
        lines = [line for line in self.vocabulary.toPlainText().splitlines() if line.strip()]
        self.vocabulary.setPlainText("\n".join(lines + new))
        skipped = f"; {len(problems)} lines skipped, the first: {problems[0]}" if problems else ""
        self.vocabulary_note.setText(f"Imported {len(new)} new entries from {path.name}{skipped}")

    def export_vocabulary(self, path: Path) -> None:
        """Write the entries in the list to ``path`` as a vocabulary file; a failure is said below the list."""
        entries = self._entries()
        try:
            write_vocabulary_file(path, entries)
        except OSError as error:
            self.vocabulary_note.setText(f"Could not export to {path}: {error.strerror or error}")
            return
        self.vocabulary_note.setText(f"Exported {len(entries)} entries to {path}")

    def _choose_import(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Import vocabulary", "", _FILE_FILTER)
        if path:
            self.import_vocabulary(Path(path))

    def _choose_export(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export vocabulary", "vocabulary.txt", _FILE_FILTER)
        if path:
            self.export_vocabulary(Path(path))

    def _entries(self) -> list[VocabularyEntry]:
        return parse_vocabulary(self.vocabulary.toPlainText().splitlines())[0]

    def _lines(self, editor: QPlainTextEdit) -> list[str]:
        return [line.strip() for line in editor.toPlainText().splitlines() if line.strip()]

    def _edited(self) -> WritingSettings:
        """The settings with the editors' lines where they came from: ``[writing]`` or one mode's table."""
        edited = copy.deepcopy(self._settings)
        vocabulary, replacements = self._lines(self.vocabulary), self._lines(self.replacements)
        if self._shown == EVERY_MODE:
            edited.vocabulary, edited.replacements = vocabulary, replacements
            return edited
        for table, lines in ((edited.mode_vocabulary, vocabulary), (edited.mode_replacements, replacements)):
            if lines:
                table[self._shown] = lines
            else:
                table.pop(self._shown, None)
        shortcut = self.mode_shortcut.keySequence().toString()
        if shortcut:
            edited.mode_shortcuts[self._shown] = shortcut
        else:
            edited.mode_shortcuts.pop(self._shown, None)
        built_in = _built_in(self._shown)
        if self.mode_live_typing.isChecked() == built_in.live_typing:
            edited.live_typing.pop(self._shown, None)
        else:
            edited.live_typing[self._shown] = self.mode_live_typing.isChecked()
        style, prompt = self.mode_cleanup.currentData(), self.mode_cleanup_prompt.text().strip()
        if style == built_in.cleanup:
            edited.cleanup.pop(self._shown, None)
        else:
            edited.cleanup[self._shown] = style
        if prompt and prompt != built_in.cleanup_prompt:
            edited.cleanup_prompts[self._shown] = prompt
        else:
            edited.cleanup_prompts.pop(self._shown, None)
        apps = [app.strip() for app in self.mode_apps.text().split(",") if app.strip()]
        edited.app_modes = {app: mode for app, mode in edited.app_modes.items() if mode != self._shown}
        edited.app_modes.update(dict.fromkeys(apps, self._shown))
        return edited

    def _show_lists(self) -> None:
        if self._shown == EVERY_MODE:
            vocabulary, replacements = self._settings.vocabulary, self._settings.replacements
        else:
            vocabulary = self._settings.mode_vocabulary.get(self._shown, [])
            replacements = self._settings.mode_replacements.get(self._shown, [])
        self.mode_shortcut.setKeySequence(QKeySequence(self._settings.mode_shortcuts.get(self._shown, "")))
        self.mode_apps.setText(", ".join(app for app, mode in self._settings.app_modes.items() if mode == self._shown))
        shown = user_mode(self._settings, self._shown)[0] if self._shown else None
        built_in = _built_in(self._shown).app_classes if self._shown else ()
        self.mode_live_typing.setChecked(shown.live_typing if shown else False)
        self.mode_live_typing.setEnabled(self._shown != EVERY_MODE)
        self.mode_cleanup.setCurrentIndex(self.mode_cleanup.findData(shown.cleanup if shown else CleanupStyle.NONE))
        self.mode_cleanup_prompt.setText(shown.cleanup_prompt if shown else "")
        for widget in (self.mode_cleanup, self.mode_cleanup_prompt):
            widget.setEnabled(shown is not None)
        self.mode_apps.setPlaceholderText(
            f"besides {', '.join(built_in)}; window classes, comma-separated"
            if built_in
            else "window classes, comma-separated, e.g. Gedit, org.gnome.TextEditor"
        )
        self.mode_shortcut.setEnabled(self._shown != EVERY_MODE)
        self.mode_apps.setEnabled(self._shown != EVERY_MODE)
        self.vocabulary.setPlainText("\n".join(vocabulary))
        self.replacements.setPlainText("\n".join(replacements))
        self._check_vocabulary()
        self._check_replacements()

    def _switch_lists(self) -> None:
        self._settings = self._edited()
        self._shown = self.words_for.currentData()
        self._show_lists()

    def _check_vocabulary(self) -> None:
        entries, problems = parse_vocabulary(self.vocabulary.toPlainText().splitlines())
        self.vocabulary_note.setText(_summary(len(entries), "entry", "entries", problems))
        self._update_trial()

    def _check_replacements(self) -> None:
        rules, problems = parse_replacements(self.replacements.toPlainText().splitlines())
        self.replacements_note.setText(_summary(len(rules), "rule", "rules", problems))
        self._update_trial()

    def _update_trial(self) -> None:
        """Write the trial sentence in the mode whose words are shown (the default mode for every mode's)."""
        name = self._shown or self.default_mode.currentData()
        mode, _ = user_mode(self._edited(), name)
        sentence = self.trial.text().strip()
        self.trial_result.setText(f"{write_text(sentence, mode)}   ({mode.name} mode)" if sentence else "")


def _built_in(name: str) -> Mode:
    return next(mode for mode in DEFAULT_MODES if mode.name == name)


def _summary(count: int, one: str, many: str, problems: list[str]) -> str:
    """``3 entries`` or ``3 entries; line 4: ...`` for the note below a list."""
    counted = f"{count} {one if count == 1 else many}"
    return f"{counted}; not used: {'; '.join(problems)}" if problems else counted
