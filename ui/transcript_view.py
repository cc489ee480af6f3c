"""The live transcript: committed text in the normal colour, the provisional tail greyed and
italic, and under an utterance that matched a command, the action: its command, slots and
status, with Confirm / Cancel / Undo links. It follows new text until the user scrolls up, and
again once they scroll back down.

The document is edited in place, one utterance at a time: a partial or final rewrites only its
utterance's paragraph, so an update costs the same early in a session as after an hour."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from PySide6.QtCore import QEvent, Qt, QUrl, Signal
from PySide6.QtGui import (
    QColor,
    QPalette,
    QTextBlock,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextFrameFormat,
    QTextLength,
    QTextTable,
    QTextTableFormat,
)
from PySide6.QtWidgets import QTextBrowser, QWidget

from voxdesk.app.actions.center import ActionRecord, ActionStatus
from voxdesk.app.actions.summary import action_line
from voxdesk.app.listening.transcript import Utterance

__all__ = ["ACTION_LINK", "EMPTY_HINT", "TranscriptView"]

ACTION_LINK = "voxdesk-action"
"""The scheme of the action links: ``voxdesk-action:confirm/7`` confirms record 7."""

_STATUS_COLOURS = {
    ActionStatus.WAITING: "#a05a00",
    ActionStatus.RUNNING: "#1d5fa8",
    ActionStatus.DONE: "#1e7b34",
    ActionStatus.FAILED: "#c0281d",
}
_VERBS = (("confirm", "Confirm", "Ctrl+Enter"), ("cancel", "Cancel", "Ctrl+Backspace"), ("undo", "Undo", "Ctrl+Z"))
_PARAGRAPH_MARGIN = 12.0  # what Qt gives an HTML <p>, as the transcript had when it was HTML
_ACTION_INDENT = 18.0
_ACTION_PADDING = 4.0
_ACTION_SPACING = 2.0
_WHITE_SPACE = re.compile(r"[^\S\xa0]+")
_SELECT = QTextCursor.MoveMode.KeepAnchor


@dataclass
class _Section:
    """One utterance and where the document shows it: its paragraph while it has text, and
    the table of its action."""

    utterance: Utterance
    index: int
    paragraph: QTextBlock | None = None
    table: QTextTable | None = None


EMPTY_HINT = (
    "Press Listen (Ctrl+Space) and speak: what you say appears here as you say it.\n"
    "Try “what time is it?”, “open the browser”, “set a timer for 5 minutes”, or “switch to dictation mode” "
    "to type into the app in front of you."
)
"""What the empty transcript says: how to start, and a few things to say."""


class TranscriptView(QTextBrowser):
    """Read-only view of the utterances, updated one utterance (or action) at a time."""

    action_requested = Signal(str, int)
    """An action link was followed: the verb (confirm, cancel, undo) and the record id."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Live transcript")
        self.setPlaceholderText(EMPTY_HINT)
        self.setOpenLinks(False)
        self._sections: list[_Section] = []  # oldest first
        self._by_id: dict[int, _Section] = {}
        self._actions: dict[int, ActionRecord] = {}  # by utterance id: the latest record
        self.follow = True  # keep the newest text in view
        self.verticalScrollBar().valueChanged.connect(self._scrolled)
        self.anchorClicked.connect(self._link_followed)

    def show_utterance(self, utterance: Utterance) -> None:
        """Add or replace one utterance."""
        section = self._by_id.get(utterance.id)
        if section is None:
            section = _Section(utterance, len(self._sections))
            self._sections.append(section)
            self._by_id[utterance.id] = section
            with self._editing():
                self._redraw_from(section)
            return
        section.utterance = utterance
        if section.paragraph is not None and _shown(utterance):
            with self._editing():
                self._fill_paragraph(section.paragraph, utterance)
        elif section.paragraph is not None or _shown(utterance):  # the paragraph comes or goes
            with self._editing():
                self._redraw_from(section)

    def show_action(self, record: ActionRecord) -> None:
        """Show or update the action under its utterance (records without one are not shown)."""
        if record.utterance_id is None:
            return
        self._actions[record.utterance_id] = record
        section = self._by_id.get(record.utterance_id)
        if section is None:
            return
        with self._editing():
            if section.table is not None:
                self._fill_table(section.table, record)
            else:
                self._redraw_from(section)

    def clear_transcript(self) -> None:
        """Remove every utterance and action; new text is followed again, wherever the view was."""
        self._sections.clear()
        self._by_id.clear()
        self._actions.clear()
        self.follow = True  # an empty view has no scroll bar left to scroll back down with
        with self._editing():
            self.document().clear()

    def committed_text(self) -> str:
        """The committed text shown, one line per utterance."""
        return "\n".join(s.utterance.committed.strip() for s in self._sections if s.utterance.committed.strip())

    def provisional_text(self) -> str:
        """The provisional tails shown, joined by spaces."""
        return " ".join(s.utterance.provisional.strip() for s in self._sections if s.utterance.provisional.strip())

    def action_text(self, utterance_id: int) -> str:
        """The action line shown under an utterance; empty when it has none."""
        record = self._actions.get(utterance_id)
        return action_line(record) if record is not None and utterance_id in self._by_id else ""

    def provisional_colour(self) -> QColor:
        """Half way between text and background: greyed in light and dark palettes alike."""
        text, base = self.palette().color(QPalette.ColorRole.Text), self.palette().color(QPalette.ColorRole.Base)
        return QColor(
            (text.red() + base.red()) // 2, (text.green() + base.green()) // 2, (text.blue() + base.blue()) // 2
        )

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and self._sections:  # colours come from the palette
            with self._editing():
                self._redraw_from(self._sections[0])

    # -- editing the document --------------------------------------------------------------

    @contextmanager
    def _editing(self) -> Iterator[None]:
        """Edits made inside as one change of the document (laid out once), then the newest
        text in view or the scroll position kept."""
        bar = self.verticalScrollBar()
        position = bar.value()
        cursor = QTextCursor(self.document())
        cursor.beginEditBlock()
        try:
            yield
        finally:
            cursor.endEditBlock()
        bar.setValue(bar.maximum() if self.follow else position)

    def _redraw_from(self, first: _Section) -> None:
        """Show ``first`` and every later utterance anew; what shows those before stays as it is."""
        ends_before = (_end(self._sections[i]) for i in reversed(range(first.index)))  # nearest first
        self._remove_after(next((end for end in ends_before if end is not None), None))
        for section in self._sections[first.index :]:
            section.paragraph = section.table = None
            if _shown(section.utterance):
                section.paragraph = self._append_paragraph()
                self._fill_paragraph(section.paragraph, section.utterance)
            if (record := self._actions.get(section.utterance.id)) is not None:
                section.table = self._append_table()
                self._fill_table(section.table, record)

    def _remove_after(self, end: int | None) -> None:
        """Remove everything after position ``end``; everything when it is ``None``."""
        if end is None:
            self.document().clear()
            return
        cursor = QTextCursor(self.document())
        cursor.setPosition(end)
        kept = cursor.blockFormat(), cursor.blockCharFormat()
        cursor.movePosition(QTextCursor.MoveOperation.End, _SELECT)
        if cursor.hasSelection():
            cursor.removeSelectedText()
            cursor.setBlockFormat(kept[0])  # the joined block took the format of the last one
            cursor.setBlockCharFormat(kept[1])

    def _append_paragraph(self) -> QTextBlock:
        cursor = QTextCursor(self.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        paragraph = QTextBlockFormat()
        paragraph.setTopMargin(_PARAGRAPH_MARGIN)
        paragraph.setBottomMargin(_PARAGRAPH_MARGIN)
        if self.document().isEmpty():
            cursor.setBlockFormat(paragraph)
        else:
            cursor.insertBlock(paragraph, QTextCharFormat())
        return cursor.block()

    def _append_table(self) -> QTextTable:
        cursor = QTextCursor(self.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        table = QTextTableFormat()
        table.setBorder(0)
        table.setCellSpacing(_ACTION_SPACING)
        table.setCellPadding(_ACTION_PADDING)
        table.setPosition(QTextFrameFormat.Position.InFlow)
        table.setWidth(QTextLength())
        table.setHeight(QTextLength())
        table.setTopMargin(0)
        table.setBottomMargin(0)
        table.setRightMargin(0)
        table.setLeftMargin(_ACTION_INDENT)
        table.setBorderCollapse(False)
        table.setHeaderRowCount(0)
        table.setColumnWidthConstraints([QTextLength()])
        table.setBackground(QColor(self.palette().color(QPalette.ColorRole.AlternateBase).name()))
        inserted = cursor.insertTable(1, 1, table)
        cell = QTextBlockFormat()
        cell.setAlignment(Qt.AlignmentFlag.AlignLeft)
        inserted.cellAt(0, 0).firstCursorPosition().setBlockFormat(cell)
        return inserted

    def _fill_paragraph(self, paragraph: QTextBlock, utterance: Utterance) -> None:
        cursor = QTextCursor(paragraph)
        cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock, _SELECT)
        cursor.removeSelectedText()
        committed, tail = _collapsed(utterance.committed), _collapsed(utterance.provisional)
        cursor.insertText(committed, QTextCharFormat())
        if tail:
            if committed:
                cursor.insertText(" ", QTextCharFormat())
            greyed = QTextCharFormat()
            greyed.setFontItalic(True)
            greyed.setForeground(QColor(self.provisional_colour().name()))
            cursor.insertText(tail, greyed)

    def _fill_table(self, table: QTextTable, record: ActionRecord) -> None:
        cell = table.cellAt(0, 0)
        cursor = cell.firstCursorPosition()
        cursor.setPosition(cell.lastCursorPosition().position(), _SELECT)
        cursor.insertHtml(self._action_html(record))

    def _action_html(self, record: ActionRecord) -> str:
        colour = _STATUS_COLOURS.get(record.status, self.provisional_colour().name())
        line = html.escape(action_line(record))
        what, _, status = line.partition(" — ")
        enabled = {"confirm": record.can_confirm, "cancel": record.can_cancel, "undo": record.can_undo}
        links = "".join(
            f' &nbsp;<a href="{ACTION_LINK}:{verb}/{record.id}">{label}</a>'
            f' <span style="color:{self.provisional_colour().name()}">({keys})</span>'
            for verb, label, keys in _VERBS
            if enabled[verb]
        )
        return f'&#9656; <b>{what}</b> — <span style="color:{colour}">{status}</span>{links}'

    def _link_followed(self, url: QUrl) -> None:
        verb, _, number = url.path().partition("/")
        if url.scheme() == ACTION_LINK and number.isdigit():
            self.action_requested.emit(verb, int(number))

    def _scrolled(self, value: int) -> None:
        bar = self.verticalScrollBar()
        if bar.maximum() > 0:
            self.follow = value >= bar.maximum() - 4


def _shown(utterance: Utterance) -> bool:
    """Whether an utterance has words to show (a paragraph)."""
    return bool(utterance.committed.strip() or utterance.provisional.strip())


def _end(section: _Section) -> int | None:
    """Where what shows ``section`` ends (the end of its last block); ``None`` when nothing does."""
    if section.table is not None:
        return section.table.lastPosition() + 1  # the empty block a table is followed by
    if section.paragraph is not None:
        return section.paragraph.position() + section.paragraph.length() - 1
    return None


def _collapsed(text: str) -> str:
    """Text as the HTML transcript showed it: none at either end, and runs of white space
    inside as one space, except no-break spaces; a paragraph separator is a space too, so
    that an utterance stays one paragraph."""
    return _WHITE_SPACE.sub(" ", text.strip())
