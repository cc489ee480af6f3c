"""The Files tab: the queue of audio files being transcribed, each with progress and a button
to cancel it or, once done, to show its transcript in the History tab."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from voxdesk.app.files.queue import FileJob, FileQueue, JobState
from voxdesk.ui.bridges import FileQueueBridge

__all__ = ["FileQueuePanel", "describe_job"]

COLUMNS = ("File", "Progress", "Status", "")
FILE, PROGRESS, STATUS, BUTTON = range(len(COLUMNS))


def _clock(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{rest:02d}" if hours else f"{minutes}:{rest:02d}"


def describe_job(job: FileJob) -> str:
    """The job's state in a few words: position, speed and time left while it runs."""
    if job.state == JobState.RUNNING:
        if job.stopping:
            return "stopping…"
        if job.duration is None:
            return "reading the file"
        words = f"{_clock(job.position)} of {_clock(job.duration)}"
        if job.position == 0:
            return f"{words} · starting"
        if job.speed:
            left = (job.duration - job.position) / job.speed
            words += f" · {job.speed:.1f}x real time · {_clock(left)} left"
        return words
    if job.state == JobState.FAILED:
        return f"failed: {job.error}"
    if job.state == JobState.DONE and job.outcome is not None:
        if not job.outcome.text:
            return "done: no speech heard"
        return "done" if job.outcome.session_id is not None else "done (not recorded in the history)"
    if job.state == JobState.CANCELLED and job.outcome is not None and job.outcome.session_id is not None:
        return f"cancelled at {_clock(job.position)}; the part before is in the history"
    return str(job.state)


class FileQueuePanel(QWidget):
    """One row per file added to ``queue``; newest last."""

    show_session_requested = Signal(int)
    """The user asked to see a finished file's session (its history id) in the History tab."""

    def __init__(self, queue: FileQueue, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.queue = queue
        self._rows: dict[int, int] = {}
        self.hint = QLabel("Drop audio files on the window, or use File > Transcribe file… (Ctrl+O).")
        self.hint.setWordWrap(True)
        self.table = QTableWidget(0, len(COLUMNS), self)
        self.table.setAccessibleName("Files being transcribed")
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(FILE, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(STATUS, QHeaderView.ResizeMode.Stretch)
        layout = QVBoxLayout(self)
        layout.addWidget(self.hint)
        layout.addWidget(self.table, 1)
        self._bridge = FileQueueBridge(queue, self)
        self._bridge.changed.connect(self.show_job)
        for job in queue.jobs:
            self.show_job(job)

    def row_of(self, job_id: int) -> int:
        """The table row showing a job."""
        return self._rows[job_id]

    def progress_bar(self, job_id: int) -> QProgressBar:
        """The progress bar of a job's row."""
        bar = self.table.cellWidget(self.row_of(job_id), PROGRESS)
        assert isinstance(bar, QProgressBar)
        return bar

    def button(self, job_id: int) -> QPushButton:
        """The Cancel (or Show in History) button of a job's row."""
        button = self.table.cellWidget(self.row_of(job_id), BUTTON)
        assert isinstance(button, QPushButton)
        return button

    def status_text(self, job_id: int) -> str:
        """The status words of a job's row."""
        item = self.table.item(self.row_of(job_id), STATUS)
        return "" if item is None else item.text()

    def show_job(self, job: FileJob) -> None:
        """Add or update the row of ``job``."""
        if job.id not in self._rows:
            self._add_row(job)
        row = self._rows[job.id]
        bar = self.progress_bar(job.id)
        fraction = job.fraction
        if job.state == JobState.RUNNING and not fraction:
            bar.setRange(0, 0)  # busy: reading the file, or decoding its first batch
        else:
            bar.setRange(0, 1000)
            bar.setValue(round((fraction or 0.0) * 1000))
        status = self.table.item(row, STATUS)
        assert status is not None
        status.setText(describe_job(job))
        status.setToolTip(job.error)
        self._update_button(job)

    def _add_row(self, job: FileJob) -> None:
        row = self.table.rowCount()
        self.table.insertRow(row)
        self._rows[job.id] = row
        name = QTableWidgetItem(job.path.name)
        name.setToolTip(str(job.path))
        self.table.setItem(row, FILE, name)
        self.table.setItem(row, STATUS, QTableWidgetItem())
        bar = QProgressBar()
        bar.setAccessibleName(f"Progress of {job.path.name}")
        bar.setFormat("%p%")
        self.table.setCellWidget(row, PROGRESS, bar)
        button = QPushButton("Cancel")
        button.clicked.connect(lambda: self._button_clicked(job))
        self.table.setCellWidget(row, BUTTON, button)

    def _update_button(self, job: FileJob) -> None:
        button = self.button(job.id)
        session_id = job.outcome.session_id if job.outcome is not None else None
        if not job.state.finished:
            button.setText("Cancel")
            button.setAccessibleName(f"Cancel {job.path.name}")
            button.setEnabled(not job.stopping)
        else:
            button.setText("Show in History")
            button.setAccessibleName(f"Show {job.path.name} in the history")
            button.setEnabled(session_id is not None)

    def _button_clicked(self, job: FileJob) -> None:
        if not job.state.finished:
            self.queue.cancel(job.id)
        elif job.outcome is not None and job.outcome.session_id is not None:
            self.show_session_requested.emit(job.outcome.session_id)
