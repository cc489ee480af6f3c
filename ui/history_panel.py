"""The history panel: past sessions, full-text search, copy, export and delete.

It reads through its own :class:`~voxdesk.app.history.store.HistoryStore` connection. A live session
being written by another connection shows up by itself: a timer polls the store's
``data_version`` once a second (one ``PRAGMA``, microseconds, no disk read when nothing
changed) and reloads the list and the visible transcript only when another connection has
committed. The window may also call :meth:`HistoryPanel.refresh` directly, for instance
whenever an utterance is added; that reloads at once and costs a few small queries.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Slot
from PySide6.QtGui import QCloseEvent, QGuiApplication
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from voxdesk.app.history.export import ExportError, export_hits, export_session, format_for_path
from voxdesk.app.history.records import SearchHit, SessionSummary, UtteranceRecord
from voxdesk.app.history.store import HistoryError, HistoryStore
from voxdesk.app.llm.rewrite import Rewritten
from voxdesk.app.writing.modes import DEFAULT_MODES

Rewriter = Callable[[str, str, str, str], Awaitable[Rewritten]]
"""Writes a past utterance again: (text, mode name, edit instruction, model; ``""`` for the
settings' mode and model) → the rewrite."""
_AN_EDIT = "An edit, said in words…"

__all__ = ["HistoryPanel"]

SESSION_LIMIT = 500
SEARCH_LIMIT = 500
_FILTERS = {
    "SubRip subtitles (*.srt)": ".srt",
    "WebVTT subtitles (*.vtt)": ".vtt",
    "Plain text (*.txt)": ".txt",
    "JSON (*.json)": ".json",
}


def _worth_listing(summary: SessionSummary) -> bool:
    """A live session shows once it has words (listening started and stopped is no session to
    keep looking at); a file's shows even when nothing was heard in it."""
    return summary.kind != "live" or summary.utterance_count > 0


def _which_utterances(first: int, last: int, count: int) -> str:
    """``", utterances 2 to 3"`` for a part of a session's ``count`` utterances, ``""`` for all."""
    if first == 0 and last == count - 1:
        return ""
    return f", utterance {first + 1}" if first == last else f", utterances {first + 1} to {last + 1}"


def _when(summary: SessionSummary) -> str:
    return summary.started_at.astimezone().strftime("%Y-%m-%d %H:%M")


class HistoryPanel(QWidget):
    """Sessions newest first, a search box, the selected transcript or the search results, and actions.

    ``store`` is a function that opens a store (called once, on this thread), a path to the
    history file, or ``None`` for the default file. ``poll_ms`` is how often to look for
    changes made by other connections (0: never; call :meth:`refresh` instead).
    """

    def __init__(
        self,
        store: Callable[[], HistoryStore] | Path | None = None,
        parent: QWidget | None = None,
        poll_ms: int = 1000,
    ) -> None:
        super().__init__(parent)
        if callable(store):
            self._store = store()
        else:
            self._store = HistoryStore.open(store)
        self.rewriter: Rewriter | None = None  # set once the assistant runs (its modes and LLM)
        self._runs: set[asyncio.Future[None]] = set()
        self._summaries: list[SessionSummary] = []
        self._hits: list[SearchHit] = []
        self._utterances: list[UtteranceRecord] = []
        self._build()
        self._version = self._store.data_version()
        self.refresh()
        self._timer = QTimer(self)
        self._timer.timeout.connect(self._poll)
        if poll_ms > 0:
            self._timer.start(poll_ms)

    def _build(self) -> None:
        self.search_box = QLineEdit(self)
        self.search_box.setPlaceholderText("Search all transcripts")
        self.search_box.setAccessibleName("Search history")
        self.search_box.setClearButtonEnabled(True)
        self.search_box.textChanged.connect(self._search_changed)

        self.session_list = QListWidget(self)
        self.session_list.setAccessibleName("Sessions")
        self.session_list.currentItemChanged.connect(lambda *_: self._show())

        self.heading = QLabel(self)
        self.heading.setAccessibleName("Selected session")
        self.heading.setWordWrap(True)
        self.view = QPlainTextEdit(self)
        self.view.setReadOnly(True)
        self.view.setAccessibleName("Transcript")

        self.copy_button = QPushButton("&Copy", self)
        self.copy_button.setAccessibleName("Copy transcript")
        self.copy_button.clicked.connect(self.copy)
        self.export_button = QPushButton("&Export…", self)
        self.export_button.setAccessibleName("Export transcript to a file")
        self.export_button.clicked.connect(self.export)
        self.delete_button = QPushButton("&Delete", self)
        self.delete_button.setAccessibleName("Delete selected session")
        self.delete_button.clicked.connect(self.delete_selected)
        self.again_button = QPushButton("Run &again…", self)
        self.again_button.setAccessibleName("Run the session again through a mode or an edit")
        self.again_button.setToolTip(
            "Its utterances (those of the lines selected in the transcript, if any) written again by "
            "a mode's cleanup or an edit, with the LLM of Settings or another model (the history is kept)"
        )
        self.again_button.clicked.connect(self._ask_run_again)
        self.again_heading = QLabel(self)
        self.again_heading.setAccessibleName("Run again")
        self.again_heading.setWordWrap(True)
        self.again_view = QPlainTextEdit(self)
        self.again_view.setReadOnly(True)
        self.again_view.setAccessibleName("Session run again")
        for widget in (self.again_heading, self.again_view):
            widget.hide()
        self.delete_all_button = QPushButton("Delete e&verything", self)
        self.delete_all_button.setAccessibleName("Delete the whole history")
        self.delete_all_button.clicked.connect(self.delete_everything)

        left = QWidget(self)
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.search_box)
        left_layout.addWidget(self.session_list)
        right = QWidget(self)
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(self.heading)
        right_layout.addWidget(self.view)
        right_layout.addWidget(self.again_heading)
        right_layout.addWidget(self.again_view)
        buttons = QHBoxLayout()
        for button in (self.copy_button, self.export_button, self.again_button, self.delete_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(self.delete_all_button)
        right_layout.addLayout(buttons)
        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        splitter.addWidget(left)
        splitter.addWidget(right)
        splitter.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.addWidget(splitter)

    # Public ----------------------------------------------------------------------------------

    def selected_session_id(self) -> int | None:
        """The id of the selected session, if any."""
        item = self.session_list.currentItem()
        return None if item is None else int(item.data(Qt.ItemDataRole.UserRole))

    def select_session(self, session_id: int) -> bool:
        """Select a session in the list; ``False`` if it is not shown."""
        for row in range(self.session_list.count()):
            item = self.session_list.item(row)
            if int(item.data(Qt.ItemDataRole.UserRole)) == session_id:
                self.session_list.setCurrentItem(item)
                return True
        return False

    @Slot()
    def refresh(self) -> None:
        """Reload the sessions, the search results and the visible transcript from the store."""
        try:
            self._reload()
        except HistoryError as error:  # e.g. the disk failed: say so, keep the window alive
            self.heading.setText(f"The history cannot be read: {error}")

    def _reload(self) -> None:
        selected = self.selected_session_id()
        self._summaries = self._store.sessions(limit=SESSION_LIMIT)
        words = self.search_box.text()
        self._hits = self._store.search(words, limit=SEARCH_LIMIT) if words.strip() else []
        matching = {hit.session.id for hit in self._hits}
        shown = [s for s in self._summaries if _worth_listing(s) and (not words.strip() or s.id in matching)]
        self.session_list.blockSignals(True)
        try:
            self.session_list.clear()
            for summary in shown:
                preview = f"(partial) {summary.preview}" if summary.partial else summary.preview
                label = f"{_when(summary)}  ·  {summary.kind}  ·  {summary.utterance_count}\n{preview}"
                item = QListWidgetItem(label, self.session_list)
                item.setData(Qt.ItemDataRole.UserRole, summary.id)
                item.setToolTip(summary.source)
            if selected is not None:
                self.select_session(selected)
        finally:
            self.session_list.blockSignals(False)
        self._show()

    async def run_again(self, mode: str = "", edit: str = "", model: str = "") -> None:
        """Write the selected session's utterances again (those whose lines are selected in the
        transcript, if any), in ``mode`` or as ``edit`` says, by ``model`` if named, and show the
        result under the transcript; the history is left as it is."""
        session_id, rewriter = self.selected_session_id(), self.rewriter
        if session_id is None or rewriter is None:
            return
        utterances = self._store.utterances(session_id)
        first, last = self._selected_lines(len(utterances))
        what = f"Session {session_id}" + _which_utterances(first, last, len(utterances))
        how = (f"edited: “{edit}”" if edit else f"in the {mode or 'default'} mode") + (f" by {model}" if model else "")
        self.again_heading.setText(f"{what} running again, {how}…")
        self.again_view.clear()
        for widget in (self.again_heading, self.again_view):
            widget.show()
        lines, kept = [], 0
        for utterance in utterances[first : last + 1]:
            written = await rewriter(utterance.text, mode, edit, model)
            kept += bool(written.note)
            lines.append(written.text)
            self.again_view.setPlainText("\n".join(lines))
        note = f"; {kept} kept as {'they were' if edit else 'written'} (the LLM did not rewrite them)" if kept else ""
        self.again_heading.setText(f"{what} run again, {how} (not saved){note}")

    def _selected_lines(self, count: int) -> tuple[int, int]:
        """The first and last utterance (from 0) of the lines selected in the transcript; all of
        them without a selection, or while the transcript shows search results instead."""
        cursor = self.view.textCursor()
        if not cursor.hasSelection() or self.search_box.text().strip():
            return 0, count - 1
        document = self.view.document()
        first = document.findBlock(cursor.selectionStart()).blockNumber()
        last = document.findBlock(cursor.selectionEnd()).blockNumber()
        return min(first, count - 1), min(last, count - 1)

    @Slot()
    def _ask_run_again(self) -> None:
        choices = [f"{m.name}: {m.description}" for m in DEFAULT_MODES] + [_AN_EDIT]
        choice, chosen = QInputDialog.getItem(self, "Run again", "Write the session again:", choices, 0, False)
        if not chosen:
            return
        edit = ""
        if choice == _AN_EDIT:
            edit, chosen = QInputDialog.getText(self, "Run again", "How? For example: make it formal")
            if not chosen or not edit.strip():
                return
        model, chosen = QInputDialog.getText(self, "Run again", "Model (empty: the one in Settings):")
        if not chosen:
            return
        mode = "" if edit else choice.split(":", 1)[0]
        run = asyncio.ensure_future(self.run_again(mode, edit.strip(), model.strip()))
        self._runs.add(run)
        run.add_done_callback(self._runs.discard)

    @Slot()
    def copy(self) -> None:
        """Put the visible transcript or search results on the clipboard."""
        QGuiApplication.clipboard().setText(self.view.toPlainText())

    @Slot()
    def export(self) -> None:
        """Ask for a file name and export what is shown; the format comes from the extension."""
        session_id = self.selected_session_id()
        suggested = f"voxdesk-session-{session_id}.srt" if session_id is not None else "voxdesk-search.txt"
        path_text, chosen_filter = QFileDialog.getSaveFileName(
            self, "Export transcript", suggested, ";;".join(_FILTERS)
        )
        if not path_text:
            return
        path = Path(path_text)
        if not path.suffix and chosen_filter in _FILTERS:
            path = path.with_suffix(_FILTERS[chosen_filter])
        try:
            path.write_text(self._export_text(format_for_path(path)), encoding="utf-8")
        except (ExportError, HistoryError, OSError) as error:
            QMessageBox.warning(self, "Export failed", str(error))

    @Slot()
    def delete_selected(self) -> None:
        """Delete the selected session after a confirmation."""
        session_id = self.selected_session_id()
        if session_id is None:
            return
        if not self._confirm("Delete session", "Delete this session and its transcript? This cannot be undone."):
            return
        try:
            self._store.delete_session(session_id)
        except HistoryError as error:  # a database failure, or deleted elsewhere meanwhile
            QMessageBox.warning(self, "Delete failed", str(error))
        self.refresh()

    @Slot()
    def delete_everything(self) -> None:
        """Delete the whole history after a confirmation."""
        try:
            sessions, utterances = self._store.counts()
        except HistoryError as error:
            QMessageBox.warning(self, "Delete failed", str(error))
            return
        question = f"Delete all {sessions} sessions ({utterances} utterances) from the history? This cannot be undone."
        if not self._confirm("Delete everything", question):
            return
        try:
            self._store.delete_all()
        except HistoryError as error:
            QMessageBox.warning(self, "Delete failed", str(error))
        self.refresh()

    def closeEvent(self, event: QCloseEvent) -> None:
        self._timer.stop()
        super().closeEvent(event)

    def close_store(self) -> None:
        """Stop polling and close the panel's connection (the panel is unusable afterwards)."""
        self._timer.stop()
        self._store.close()

    # Internals -------------------------------------------------------------------------------

    def _confirm(self, title: str, question: str) -> bool:
        answer = QMessageBox.question(
            self, title, question, QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No
        )
        return answer == QMessageBox.StandardButton.Yes

    @Slot()
    def _poll(self) -> None:
        try:
            version = self._store.data_version()
        except HistoryError as error:
            self.heading.setText(f"The history cannot be read: {error}")
            return
        if version != self._version:
            self._version = version
            self.refresh()

    @Slot()
    def _search_changed(self) -> None:
        self.session_list.setCurrentRow(-1)
        self.refresh()

    def _visible_hits(self) -> list[SearchHit]:
        session_id = self.selected_session_id()
        return [h for h in self._hits if session_id is None or h.session.id == session_id]

    def _export_text(self, format_: str) -> str:
        if self.search_box.text().strip():
            return export_hits(self._visible_hits(), format_)
        session_id = self.selected_session_id()
        if session_id is None:
            return ""
        return export_session(self._store.session(session_id), self._store.utterances(session_id), format_)

    def _show(self) -> None:
        """Show the search results (in the selected session, if any) or the selected transcript."""
        bar = self.view.verticalScrollBar()
        at_end = bar.value() >= bar.maximum()
        session_id = self.selected_session_id()
        summary = next((s for s in self._summaries if s.id == session_id), None)
        searching = bool(self.search_box.text().strip())
        if searching:
            hits = self._visible_hits()
            self.heading.setText(f"{len(hits)} matching utterance{'s' if len(hits) != 1 else ''}")
            text = export_hits(hits, "txt")
        elif summary is not None:
            self.heading.setText(
                f"Session {summary.id}, {_when(summary)}: {summary.kind} ({summary.source}), "
                f"{summary.engine} {summary.model}".strip()
            )
            text = "".join(f"{u.text}\n" for u in self._store.utterances(summary.id))
        else:
            self.heading.setText(f"{len(self._summaries)} sessions" if self._summaries else "No history yet")
            text = ""
        if text != self.view.toPlainText():
            self.view.setPlainText(text)
            if at_end:
                bar.setValue(bar.maximum())
        self.copy_button.setEnabled(bool(text))
        self.export_button.setEnabled(bool(text))
        self.delete_button.setEnabled(session_id is not None)
        self.again_button.setEnabled(session_id is not None and self.rewriter is not None)
        self.delete_all_button.setEnabled(bool(self._summaries))
