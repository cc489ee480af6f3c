"""Transcribing files from the window: a dropped file shows progress and lands in the History
tab; rows cancel queued and running files."""

from __future__ import annotations

import asyncio
import itertools
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QTimer, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QFileDialog
from pytestqt.qtbot import QtBot

from tests.app.actions.fakes import recording_services
from tests.app.files.test_queue import FakeRunner
from tests.conftest import fixture_path
from tests.recognition import assert_recognized
from tests.speech_fixtures import Fixture
from voxdesk.app.files.queue import FileQueue, JobState
from voxdesk.app.settings import Settings
from voxdesk.ui.desktop import Desktop
from voxdesk.ui.file_queue import FileQueuePanel

FILE_TIMEOUT_MS = 60_000


def drop_files(qtbot: QtBot, desktop: Desktop, paths: list[Path]) -> bool:
    """Drag ``paths`` over the window and drop them, as a file manager would; whether the drag was accepted."""
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path)) for path in paths])
    window = desktop.window
    point = QPointF(window.rect().center())
    buttons, modifiers = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    enter = QDragEnterEvent(point.toPoint(), Qt.DropAction.CopyAction, mime, buttons, modifiers)
    QApplication.sendEvent(window, enter)
    drop = QDropEvent(point, Qt.DropAction.CopyAction, mime, buttons, modifiers)
    QApplication.sendEvent(window, drop)
    return enter.isAccepted() and drop.isAccepted()


def close_desktop(qtbot: QtBot, desktop: Desktop) -> None:
    closing = asyncio.ensure_future(desktop.assistant.aclose())
    qtbot.waitUntil(closing.done, timeout=FILE_TIMEOUT_MS)
    closing.result()
    if desktop.history_panel is not None:
        desktop.history_panel.close_store()


def test_dropped_files_show_progress_and_their_transcripts_in_the_history_tab(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, speech: dict[str, Fixture], tmp_path: Path
) -> None:
    passage, command = speech["passage-slt"], speech["command09-slt"]  # the passage is long enough to watch
    desktop = Desktop(Settings(), [], save_changes=False, action_services=recording_services())
    qtbot.addWidget(desktop.window)
    desktop.window.show()
    panel, history = desktop.files_panel, desktop.history_panel
    assert history is not None
    shown: dict[int, list[int]] = {}  # what each row's progress bar showed at each change
    desktop.assistant.files.subscribe(
        lambda job: shown.setdefault(job.id, []).append(panel.progress_bar(job.id).value())
    )

    ticks: list[float] = []  # the window's own timer, to see that it never waits for the work
    timer = QTimer(desktop.window)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    timer.start(20)

    paths = [fixture_path(passage), fixture_path(command), tmp_path]  # the folder is left out
    assert drop_files(qtbot, desktop, paths)
    long_job, job = desktop.assistant.files.jobs
    assert desktop.window.tabs.currentWidget() is panel
    qtbot.waitUntil(lambda: job.state.finished, timeout=FILE_TIMEOUT_MS)
    timer.stop()
    longest_wait = max(later - earlier for earlier, later in itertools.pairwise(ticks))
    assert longest_wait < 0.5, f"the window stood still for {longest_wait:.2f} s while files were transcribed"

    assert (long_job.state, job.state) == (JobState.DONE, JobState.DONE), (long_job.error, job.error)
    assert len({v for v in shown[long_job.id] if 0 < v < 1000}) >= 2, f"no progress seen: {shown}"
    assert panel.progress_bar(job.id).value() == 1000 and panel.status_text(job.id) == "done"
    qtbot.mouseClick(panel.button(job.id), Qt.MouseButton.LeftButton)  # Show in History
    assert desktop.window.tabs.currentWidget() is history
    assert job.outcome is not None and history.selected_session_id() == job.outcome.session_id
    assert f"file ({fixture_path(command)})" in history.heading.text()
    assert_recognized(command, history.view.toPlainText())
    assert history.session_list.count() == 2
    close_desktop(qtbot, desktop)


def test_file_transcribe_file_with_ctrl_o_queues_the_chosen_files(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    desktop = Desktop(Settings(), [], save_changes=False, action_services=recording_services())
    qtbot.addWidget(desktop.window)
    action = desktop.window.transcribe_file_action
    assert action.text() == "&Transcribe file…" and action.shortcut().toString() == "Ctrl+O"
    assert desktop.window.menuBar().actions()[0] == desktop.window.file_menu.menuAction()
    chosen = [str(tmp_path / "one.m4a"), str(tmp_path / "two.wav")]
    monkeypatch.setattr(QFileDialog, "getOpenFileNames", lambda *args: (chosen, ""))  # the user picks two
    with qtbot.waitSignal(desktop.window.transcribe_requested) as request:
        action.trigger()
    assert request.args == [[Path(name) for name in chosen]]
    assert [job.path for job in desktop.assistant.files.jobs] == [Path(name) for name in chosen]
    qtbot.waitUntil(lambda: all(job.state.finished for job in desktop.assistant.files.jobs), timeout=FILE_TIMEOUT_MS)
    assert [job.state for job in desktop.assistant.files.jobs] == [JobState.FAILED, JobState.FAILED]  # no such files
    assert "no such file" in desktop.files_panel.status_text(desktop.assistant.files.jobs[0].id)
    close_desktop(qtbot, desktop)


def test_cancel_buttons_stop_a_queued_and_the_running_file(qtbot: QtBot, qloop: asyncio.AbstractEventLoop) -> None:
    runner = FakeRunner()
    queue = FileQueue(runner)
    panel = FileQueuePanel(queue)
    qtbot.addWidget(panel)
    running, queued, last = queue.add([Path("a.wav"), Path("b.wav"), Path("c.wav")])
    # RUNNING comes a loop step before the runner starts and reports its first progress: wait for both.
    qtbot.waitUntil(lambda: running.state == JobState.RUNNING and running.duration is not None)
    assert panel.status_text(running.id) == "0:00 of 0:10 · starting" and panel.status_text(queued.id) == "queued"
    assert panel.progress_bar(running.id).maximum() == 0  # busy until the first progress

    qtbot.mouseClick(panel.button(queued.id), Qt.MouseButton.LeftButton)
    assert queued.state == JobState.CANCELLED and panel.status_text(queued.id) == "cancelled"
    qtbot.mouseClick(panel.button(running.id), Qt.MouseButton.LeftButton)
    assert panel.status_text(running.id) == "stopping…" and not panel.button(running.id).isEnabled()
    qtbot.waitUntil(lambda: running.state == JobState.CANCELLED)
    qtbot.waitUntil(lambda: last.state == JobState.RUNNING and last.duration is not None)
    assert runner.started == ["a.wav", "c.wav"]
    assert panel.button(running.id).text() == "Show in History" and not panel.button(running.id).isEnabled()
    runner.gates["c.wav"].set()
    qtbot.waitUntil(lambda: last.state == JobState.DONE)
    assert panel.progress_bar(last.id).value() == 1000 and panel.button(last.id).isEnabled()
