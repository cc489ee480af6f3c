"""Utterances with their times and latencies, newest at the bottom."""

from __future__ import annotations

from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem, QWidget

from voxdesk.app.listening.transcript import Utterance

COLUMNS = ("Time", "Text", "First text", "Final", "Language")
LANGUAGE_COLUMN = COLUMNS.index("Language")


def clock(seconds: float | None) -> str:
    if seconds is None:
        return ""
    minutes, rest = divmod(seconds, 60)
    return f"{int(minutes):02d}:{rest:04.1f}"


def latency(seconds: float | None) -> str:
    return "" if seconds is None else f"{seconds:.2f} s"


class UtteranceList(QTreeWidget):
    """One row per utterance; rows update in place as text arrives."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Utterances with times and latency")
        self.setHeaderLabels(COLUMNS)
        self.setRootIsDecorated(False)
        self.setColumnWidth(0, 110)
        self.setColumnWidth(1, 380)
        self.setColumnHidden(LANGUAGE_COLUMN, True)  # shown once an utterance has a language
        self._rows: dict[int, QTreeWidgetItem] = {}

    def show_utterance(self, utterance: Utterance) -> None:
        row = self._rows.get(utterance.id)
        if row is None:
            row = QTreeWidgetItem(self)
            self._rows[utterance.id] = row
        span = f"{clock(utterance.start)} - {clock(utterance.end)}" if utterance.final else "..."
        values = (
            span,
            utterance.text,
            latency(utterance.first_partial_latency),
            latency(utterance.final_latency),
            utterance.language or "",
        )
        for column, value in enumerate(values):
            row.setText(column, value)
        if utterance.language:
            self.setColumnHidden(LANGUAGE_COLUMN, False)
        self.scrollToItem(row)

    def clear_utterances(self) -> None:
        self.clear()
        self._rows.clear()
        self.setColumnHidden(LANGUAGE_COLUMN, True)
