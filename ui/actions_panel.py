"""The actions panel: recognized actions with Confirm / Cancel / Undo, the mode, and the log.

No business logic: it shows what the Qt-free ``ActionCenter`` reports (through an
:class:`~voxdesk.ui.bridges.ActionsBridge`, so it reaches the widgets on the Qt thread whichever
thread it came from) and forwards button clicks to it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from functools import partial
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from voxdesk.app.actions.center import ActionCenter, ActionRecord, ActionStatus
from voxdesk.ui.bridges import ActionsBridge

__all__ = ["ActionsPanel"]

logger = logging.getLogger("voxdesk.actions")

_COLUMNS = ("Command", "Details", "Status", "")
_STATUS_COLOURS = {
    ActionStatus.WAITING: Qt.GlobalColor.darkYellow,
    ActionStatus.FAILED: Qt.GlobalColor.red,
    ActionStatus.DONE: Qt.GlobalColor.darkGreen,
}


class _RowButtons(QWidget):
    """Confirm, Cancel and Undo for one record."""

    def __init__(self, record_id: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(2, 0, 2, 0)
        self.confirm = QPushButton("Confirm")
        self.cancel = QPushButton("Cancel")
        self.undo = QPushButton("Undo")
        for button, verb in ((self.confirm, "Confirm"), (self.cancel, "Cancel"), (self.undo, "Undo")):
            button.setAccessibleName(f"{verb} action {record_id}")
            layout.addWidget(button)

    def follow(self, record: ActionRecord) -> None:
        self.confirm.setEnabled(record.can_confirm)
        self.cancel.setEnabled(record.can_cancel)
        self.undo.setEnabled(record.can_undo and record.status is ActionStatus.DONE)


def _describe_slots(record: ActionRecord) -> str:
    if record.source == "dictation":
        return str(record.slots.get("text", "")).strip()
    return ", ".join(f"{key}: {value}" for key, value in record.slots.items())


class ActionsPanel(QWidget):
    """Shows an ActionCenter's records, mode and log, and lets the user confirm, cancel and undo."""

    def __init__(self, center: ActionCenter, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.center = center
        self._rows: dict[int, int] = {}  # record id -> table row
        self._buttons: dict[int, _RowButtons] = {}
        self._tasks: set[asyncio.Future[Any]] = set()
        self.setAccessibleName("Actions")

        self.mode_label = QLabel()
        self.mode_button = QPushButton()
        self.mode_button.setCheckable(True)
        self.mode_button.setAccessibleName("Dictation mode")
        self.mode_button.setToolTip("In dictation mode everything you say is typed, except the mode switch")
        self.mode_button.clicked.connect(self._toggle_mode)
        top = QHBoxLayout()
        top.addWidget(self.mode_label)
        top.addStretch(1)
        top.addWidget(self.mode_button)

        self.table = QTableWidget(0, len(_COLUMNS))
        self.table.setHorizontalHeaderLabels(_COLUMNS)
        self.table.setAccessibleName("Recognized actions")
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        for column in (0, 2, 3):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)

        self.log_view = QPlainTextEdit()
        self.log_view.setReadOnly(True)
        self.log_view.setMaximumBlockCount(500)
        self.log_view.setAccessibleName("Action log")

        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.table)
        splitter.addWidget(self.log_view)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(splitter)

        for record in center.records:
            self._show_record(record)
        for line in center.log:
            self.log_view.appendPlainText(line)
        self._show_mode(center.mode)
        self.bridge = ActionsBridge(center, self)
        self.bridge.record_changed.connect(self._show_record)
        self.bridge.mode_changed.connect(self._show_mode)
        self.bridge.log_added.connect(self.log_view.appendPlainText)

    def buttons(self, record_id: int) -> _RowButtons:
        """The Confirm / Cancel / Undo buttons of one record."""
        return self._buttons[record_id]

    def status_text(self, record_id: int) -> str:
        """The status shown for one record."""
        item = self.table.item(self._rows[record_id], 2)
        return item.text() if item else ""

    def _show_record(self, record: ActionRecord) -> None:
        row = self._rows.get(record.id)
        if row is None:
            row = self.table.rowCount()
            self.table.insertRow(row)
            self._rows[record.id] = row
            buttons = _RowButtons(record.id)
            buttons.confirm.clicked.connect(partial(self._spawn_for, record.id, self.center.confirm))
            buttons.cancel.clicked.connect(partial(self.center.cancel, record.id))
            buttons.undo.clicked.connect(partial(self._spawn_for, record.id, self.center.undo))
            self._buttons[record.id] = buttons
            self.table.setCellWidget(row, 3, buttons)
        title = QTableWidgetItem(record.command if record.source != "llm" else f"{record.command} (guessed)")
        title.setToolTip(f"You said: {record.utterance}")
        failed = record.status is ActionStatus.FAILED and record.message
        details = QTableWidgetItem(f"{record.preview} — {record.message}" if failed else record.preview)
        details.setToolTip(_describe_slots(record))
        status = QTableWidgetItem(str(record.status))
        if record.message:
            status.setToolTip(record.message)
        if record.status in _STATUS_COLOURS:
            status.setForeground(_STATUS_COLOURS[record.status])
        for column, item in enumerate((title, details, status)):
            self.table.setItem(row, column, item)
        self._buttons[record.id].follow(record)
        self.table.scrollToItem(title)

    def _show_mode(self, mode: str) -> None:
        dictation = mode == "dictation"
        self.mode_label.setText("Dictation mode: everything you say is typed" if dictation else "Command mode")
        self.mode_button.setChecked(dictation)
        self.mode_button.setText("Switch to command mode" if dictation else "Switch to dictation mode")

    def _toggle_mode(self) -> None:
        self.center.set_mode("dictation" if self.center.mode == "command" else "command")

    def _spawn_for(self, record_id: int, action: Callable[[int], Coroutine[Any, Any, ActionRecord]]) -> None:
        # Strong references: asyncio keeps tasks only weakly.
        task = asyncio.ensure_future(action(record_id))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
