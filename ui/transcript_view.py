"""The live transcript: committed text in the normal colour, the provisional tail greyed and
italic, and under an utterance that matched a command, the action: its command, slots and
status, with Confirm / Cancel / Undo links. It follows new text until the user scrolls up, and
again once they scroll back down."""

from __future__ import annotations

import html

from PySide6.QtCore import QUrl, Signal
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QTextBrowser, QWidget

from voxdesk.app.actions.center import ActionRecord, ActionStatus
from voxdesk.app.actions.summary import action_line
from voxdesk.app.listening.transcript import Utterance

__all__ = ["ACTION_LINK", "TranscriptView"]

ACTION_LINK = "voxdesk-action"
"""The scheme of the action links: ``voxdesk-action:confirm/7`` confirms record 7."""

_STATUS_COLOURS = {
    ActionStatus.WAITING: "#a05a00",
    ActionStatus.RUNNING: "#1d5fa8",
    ActionStatus.DONE: "#1e7b34",
    ActionStatus.FAILED: "#c0281d",
}
_VERBS = (("confirm", "Confirm", "Ctrl+Enter"), ("cancel", "Cancel", "Ctrl+Backspace"), ("undo", "Undo", "Ctrl+Z"))


class TranscriptView(QTextBrowser):
    """Read-only view of the utterances, updated one utterance (or action) at a time."""

    action_requested = Signal(str, int)
    """An action link was followed: the verb (confirm, cancel, undo) and the record id."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Live transcript")
        self.setOpenLinks(False)
        self._utterances: dict[int, Utterance] = {}
        self._actions: dict[int, ActionRecord] = {}  # by utterance id: the latest record
        self.follow = True  # keep the newest text in view
        self.verticalScrollBar().valueChanged.connect(self._scrolled)
        self.anchorClicked.connect(self._link_followed)

    def show_utterance(self, utterance: Utterance) -> None:
        """Add or replace one utterance."""
        self._utterances[utterance.id] = utterance
        self._render()

    def show_action(self, record: ActionRecord) -> None:
        """Show or update the action under its utterance (records without one are not shown)."""
        if record.utterance_id is not None:
            self._actions[record.utterance_id] = record
            self._render()

    def clear_transcript(self) -> None:
        self._utterances.clear()
        self._actions.clear()
        self._render()

    def committed_text(self) -> str:
        return "\n".join(u.committed.strip() for u in self._utterances.values() if u.committed.strip())

    def provisional_text(self) -> str:
        return " ".join(u.provisional.strip() for u in self._utterances.values() if u.provisional.strip())

    def action_text(self, utterance_id: int) -> str:
        """The action line shown under an utterance; empty when it has none."""
        record = self._actions.get(utterance_id)
        return action_line(record) if record is not None and utterance_id in self._utterances else ""

    def provisional_colour(self) -> QColor:
        """Half way between text and background: greyed in light and dark palettes alike."""
        text, base = self.palette().color(QPalette.ColorRole.Text), self.palette().color(QPalette.ColorRole.Base)
        return QColor(
            (text.red() + base.red()) // 2, (text.green() + base.green()) // 2, (text.blue() + base.blue()) // 2
        )

    def _render(self) -> None:
        bar = self.verticalScrollBar()
        position = bar.value()
        provisional_colour = self.provisional_colour().name()
        paragraphs = []
        for utterance in self._utterances.values():
            committed = html.escape(utterance.committed.strip())
            tail = html.escape(utterance.provisional.strip())
            if tail:
                tail = f' <i style="color:{provisional_colour}">{tail}</i>'
            if committed or tail:
                paragraphs.append(f"<p>{committed}{tail}</p>")
            if (record := self._actions.get(utterance.id)) is not None:
                paragraphs.append(self._action_html(record))
        self.setHtml("".join(paragraphs))
        bar.setValue(bar.maximum() if self.follow else position)

    def _action_html(self, record: ActionRecord) -> str:
        background = self.palette().color(QPalette.ColorRole.AlternateBase).name()
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
        return (
            f'<table cellpadding="4" bgcolor="{background}" style="margin-left:18px"><tr><td>'
            f'&#9656; <b>{what}</b> — <span style="color:{colour}">{status}</span>{links}</td></tr></table>'
        )

    def _link_followed(self, url: QUrl) -> None:
        verb, _, number = url.path().partition("/")
        if url.scheme() == ACTION_LINK and number.isdigit():
            self.action_requested.emit(verb, int(number))

    def _scrolled(self, value: int) -> None:
        bar = self.verticalScrollBar()
        if bar.maximum() > 0:
            self.follow = value >= bar.maximum() - 4
