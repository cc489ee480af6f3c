"""The live transcript: committed text in the normal colour, the provisional tail greyed and
italic. It follows new text until the user scrolls up, and again once they scroll back down."""

from __future__ import annotations

import html

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QTextBrowser, QWidget

from voxdesk.app.listening.transcript import Utterance


class TranscriptView(QTextBrowser):
    """Read-only view of the utterances, updated one utterance at a time."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Live transcript")
        self.setOpenLinks(False)
        self._utterances: dict[int, Utterance] = {}
        self.follow = True  # keep the newest text in view
        self.verticalScrollBar().valueChanged.connect(self._scrolled)

    def show_utterance(self, utterance: Utterance) -> None:
        """Add or replace one utterance."""
        self._utterances[utterance.id] = utterance
        self._render()

    def clear_transcript(self) -> None:
        self._utterances.clear()
        self._render()

    def committed_text(self) -> str:
        return "\n".join(u.committed.strip() for u in self._utterances.values() if u.committed.strip())

    def provisional_text(self) -> str:
        return " ".join(u.provisional.strip() for u in self._utterances.values() if u.provisional.strip())

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
        self.setHtml("".join(paragraphs))
        bar.setValue(bar.maximum() if self.follow else position)

    def _scrolled(self, value: int) -> None:
        bar = self.verticalScrollBar()
        if bar.maximum() > 0:
            self.follow = value >= bar.maximum() - 4
