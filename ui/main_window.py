"""The main window: live transcript, utterances with latency, level meter, listen button,
engine selector with status, and the problems users need to read. Audio files chosen from the
File menu or dropped on it are handed on for transcription."""

from __future__ import annotations

import asyncio
import copy
import statistics
from collections.abc import Callable, Coroutine
from functools import partial
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer, QUrl, Signal
from PySide6.QtGui import (
    QAction,
    QCloseEvent,
    QDesktopServices,
    QDragEnterEvent,
    QDropEvent,
    QIcon,
    QKeyEvent,
    QKeySequence,
)
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from voxdesk.app.actions.center import ActionCenter, ActionRecord
from voxdesk.app.actions.dictation import ModeChoice
from voxdesk.app.listening.capture import AudioLevel, CaptureState, CaptureStatus
from voxdesk.app.listening.controller import Controller
from voxdesk.app.listening.events import (
    AudioDropped,
    Concern,
    ControllerEvent,
    EngineSpeed,
    EngineState,
    EngineStatus,
    ListeningChanged,
    Problem,
    TranscriptChanged,
    UtteranceFinal,
)
from voxdesk.app.listening.level import LevelWatch, MeterReading
from voxdesk.app.log import log_folder
from voxdesk.app.resources import resource_path
from voxdesk.engine.kinds import EngineKind
from voxdesk.ui.bridges import ActionsBridge, ControllerBridge
from voxdesk.ui.level_meter import LevelMeter
from voxdesk.ui.settings_dialog import ENGINE_LABELS
from voxdesk.ui.transcript_view import TranscriptView
from voxdesk.ui.utterance_list import UtteranceList

AUDIO_FILTER = (
    "Audio and video files (*.wav *.flac *.ogg *.oga *.opus *.mp3 *.m4a *.aac *.mp4 *.mkv *.webm *.aiff);;All files (*)"
)

STATE_WORDS = {
    EngineState.NONE: "not started",
    EngineState.LOADING: "loading",
    EngineState.READY: "ready",
    EngineState.RECONNECTING: "reconnecting",
    EngineState.FAILED: "failed",
}


class MainWindow(QMainWindow):
    """Shows what the controller reports and forwards the user's commands to it."""

    settings_requested = Signal()
    setup_requested = Signal()
    quit_requested = Signal()
    transcribe_requested = Signal(list)
    """Files to transcribe (a list of :class:`~pathlib.Path`), chosen in the File menu or dropped."""

    def __init__(self, controller: Controller, *, shortcut_note: str = "") -> None:
        super().__init__()
        self.controller = controller
        self.shortcut_note = shortcut_note
        self._tasks: set[asyncio.Task[Any]] = set()
        self._final_latencies: list[float] = []
        self.setWindowTitle("Voxdesk")
        self.setWindowIcon(QIcon(str(resource_path("icons", "voxdesk.svg"))))
        self.resize(900, 620)

        self.listen_button = QPushButton("Listen")
        self.listen_button.setCheckable(True)
        self.listen_button.setAccessibleName("Listen")
        self.listen_button.setToolTip("Start or stop listening (Ctrl+Space)")
        self.listen_button.clicked.connect(self._listen_clicked)
        self.meter = LevelMeter()
        self.level_watch = LevelWatch()
        self.meter_timer = QTimer(self)  # the held peak falls and silence is noticed between chunks
        self.meter_timer.setInterval(100)
        self.meter_timer.timeout.connect(self._refresh_meter)
        self.engine_selector = QComboBox()
        self.engine_selector.setAccessibleName("Speech engine")
        for kind, label in ENGINE_LABELS.items():
            self.engine_selector.addItem(label, kind)
        self.engine_selector.setCurrentIndex(self.engine_selector.findData(controller.settings.engine.kind))
        self.engine_selector.activated.connect(self._engine_chosen)
        self.engine_status = QLabel()
        self.engine_status.setAccessibleName("Engine status")
        self.engine_progress = QProgressBar()
        self.engine_progress.setAccessibleName("Engine loading progress")
        self.engine_progress.setRange(0, 100)
        self.engine_progress.setMaximumWidth(120)
        self.engine_progress.hide()
        self.restart_button = QPushButton("Restart engine")
        self.restart_button.setAccessibleName("Restart engine")
        self.restart_button.setToolTip("Start the speech engine afresh and listen again")
        self.restart_button.clicked.connect(self.restart_engine)
        self.restart_button.hide()  # offered once the engine failed
        settings_button = QToolButton()
        settings_button.setText("Settings…")
        settings_button.setAccessibleName("Settings")
        settings_button.clicked.connect(self.settings_requested.emit)

        top = QHBoxLayout()
        top.addWidget(self.listen_button)
        top.addWidget(self.meter, 1)
        top.addWidget(self.engine_selector)
        top.addWidget(self.engine_progress)
        top.addWidget(self.engine_status, 1)
        top.addWidget(self.restart_button)
        top.addWidget(settings_button)

        self.problem_banner = QLabel()
        self.problem_banner.setAccessibleName("Problem")
        self.problem_banner.setWordWrap(True)
        self.problem_banner.setStyleSheet("QLabel { background: #fde2e1; color: #5c1a16; padding: 6px; }")
        self.dismiss_problems_button = QPushButton("Dis&miss")
        self.dismiss_problems_button.setAccessibleName("Dismiss the problems shown")
        self.dismiss_problems_button.clicked.connect(self.dismiss_problems)
        self.problem_row = _banner_row(self.problem_banner, self.dismiss_problems_button)
        self._problems: dict[str, Concern] = {}  # shown, oldest first
        self.speed_banner = QLabel()
        self.speed_banner.setAccessibleName("Engine speed")
        self.speed_banner.setWordWrap(True)
        self.speed_banner.setStyleSheet("QLabel { background: #fff4ce; color: #4d3900; padding: 6px; }")
        self.speed_banner.hide()
        self.alarm_banner = QLabel()
        self.alarm_banner.setAccessibleName("Alarm")
        self.alarm_banner.setWordWrap(True)
        self.alarm_banner.setStyleSheet("QLabel { background: #dbeafe; color: #10254d; padding: 6px; }")
        self.dismiss_alarm_button = QPushButton("&Dismiss")
        self.dismiss_alarm_button.setAccessibleName("Dismiss the alarm")
        self.dismiss_alarm_button.clicked.connect(self.dismiss_alarm)
        self.alarm_row = _banner_row(self.alarm_banner, self.dismiss_alarm_button)
        self.no_sound_hint = QLabel()
        self.no_sound_hint.setAccessibleName("No sound from the microphone")
        self.no_sound_hint.setWordWrap(True)
        self.no_sound_hint.setStyleSheet("QLabel { background: #fff4ce; color: #4d3900; padding: 6px; }")
        self.no_sound_hint.hide()

        self.transcript_view = TranscriptView()
        self.utterance_list = UtteranceList()
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.transcript_view)
        splitter.addWidget(self.utterance_list)
        splitter.setSizes([360, 180])
        self.tabs = QTabWidget()
        self.tabs.setAccessibleName("Panels")
        self.tabs.addTab(splitter, "&Transcript")

        self.latency_label = QLabel("Latency: speak to measure")
        self.latency_label.setAccessibleName("Latency of the last utterance")
        self.device_label = QLabel()
        self.device_label.setAccessibleName("Microphone status")
        self.dropped_label = QLabel()
        self.dropped_label.setAccessibleName("Dropped audio")
        self.dropped_label.hide()
        self.statusBar().addWidget(self.latency_label, 1)
        self.statusBar().addPermanentWidget(self.dropped_label)
        self.statusBar().addPermanentWidget(self.device_label)

        central = QWidget()
        layout = QVBoxLayout(central)
        layout.addLayout(top)
        layout.addWidget(self.alarm_row)
        layout.addWidget(self.problem_row)
        layout.addWidget(self.speed_banner)
        layout.addWidget(self.no_sound_hint)
        layout.addWidget(self.tabs, 1)
        self.setCentralWidget(central)
        self.setAcceptDrops(True)
        self._add_file_menu()
        self._add_shortcuts()
        self._add_help_menu()

        self.action_center: ActionCenter | None = None
        self.bridge = ControllerBridge(controller, self)
        self.bridge.happened.connect(self.on_event)
        self.bridge.level.connect(self.show_level)
        self.on_event(controller.engine_status)

    # -- user commands ---------------------------------------------------------------------

    def attach_actions(self, center: ActionCenter) -> None:
        """Show ``center``'s actions under their utterances, with an Actions menu whose
        shortcuts confirm, cancel or undo the newest action that allows it."""
        self.action_center = center
        self.actions_bridge = ActionsBridge(center, self)
        self.actions_bridge.record_changed.connect(self._show_action)
        self.transcript_view.action_requested.connect(self.act)
        self.mode_chip = QLabel()
        self.mode_chip.setAccessibleName("Writing mode")
        self.mode_chip.setToolTip(
            "The mode dictation is written in: by a mode shortcut, the focused application or the settings"
        )
        self.statusBar().addPermanentWidget(self.mode_chip)
        self._show_mode_choice(center.dictation.choice)
        center.dictation.add_choice_listener(self._show_mode_choice)
        menu = self.menuBar().addMenu("Act&ions")
        for text, keys, verb in (
            ("Confirm the waiting action", "Ctrl+Return", "confirm"),
            ("Cancel the waiting action", "Ctrl+Backspace", "cancel"),
            ("Undo the last action", "Ctrl+Z", "undo"),
        ):
            action = QAction(text, self)
            action.setShortcuts([QKeySequence(keys), *([QKeySequence("Ctrl+Enter")] if verb == "confirm" else [])])
            action.triggered.connect(partial(self.act_on_newest, verb))
            menu.addAction(action)

    def _show_mode_choice(self, choice: ModeChoice) -> None:
        self.mode_chip.setText(f"Writing: {choice.label}")

    def act(self, verb: str, record_id: int) -> None:
        """Confirm, cancel or undo one action."""
        if self.action_center is None:
            return
        if verb == "confirm":
            self.spawn(self.action_center.confirm(record_id))
        elif verb == "cancel":
            self.action_center.cancel(record_id)
        elif verb == "undo":
            self.spawn(self.action_center.undo(record_id))

    def act_on_newest(self, verb: str) -> None:
        """Confirm or cancel the newest waiting action, or undo the newest undoable one."""
        if self.action_center is None:
            return
        record = self.action_center.newest(waiting=verb != "undo", undoable=verb == "undo")
        if record is not None:
            self.act(verb, record.id)
        else:
            self.statusBar().showMessage(f"No action to {verb}", 3000)

    def _show_action(self, record: ActionRecord) -> None:
        self.transcript_view.show_action(record)

    def _add_shortcuts(self) -> None:
        entries: list[tuple[str, str, Callable[[], None]]] = [
            ("Start or stop listening", "Ctrl+Space", lambda: self.controller.toggle_listening()),
            ("Copy transcript", "Ctrl+Shift+C", self.copy_transcript),
            ("Clear transcript", "Ctrl+K", self.clear_transcript),
            ("Settings", "Ctrl+,", self.settings_requested.emit),
            ("Quit", "Ctrl+Q", self.quit_requested.emit),
        ]
        menu = self.menuBar().addMenu("&Voxdesk")
        for text, keys, slot in entries:
            action = QAction(text, self)
            action.setShortcut(QKeySequence(keys))
            action.triggered.connect(slot)
            menu.addAction(action)
        self.setup_action = menu.addAction("Set &up microphone and engine…")
        self.setup_action.triggered.connect(self.setup_requested.emit)

    def _add_file_menu(self) -> None:
        self.file_menu = self.menuBar().addMenu("&File")
        self.transcribe_file_action = self.file_menu.addAction("&Transcribe file…")
        self.transcribe_file_action.setShortcut(QKeySequence("Ctrl+O"))
        self.transcribe_file_action.triggered.connect(self.choose_files)

    def choose_files(self) -> None:
        """Ask for audio files and ask for them to be transcribed."""
        names, _ = QFileDialog.getOpenFileNames(self, "Transcribe files", "", AUDIO_FILTER)
        if names:
            self.transcribe_requested.emit([Path(name) for name in names])

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if _dropped_files(event):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        if files := _dropped_files(event):
            event.acceptProposedAction()
            self.transcribe_requested.emit(files)

    def _add_help_menu(self) -> None:
        menu = self.menuBar().addMenu("&Help")
        self.open_log_folder_action = menu.addAction("Open log folder")
        self.open_log_folder_action.triggered.connect(self.open_log_folder)

    def open_log_folder(self) -> None:
        """Show the folder of Voxdesk's log files in the file manager."""
        folder = log_folder()
        folder.mkdir(parents=True, exist_ok=True)
        if not QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder))):
            self.show_problem(f"could not open the log folder {folder}")

    def _listen_clicked(self) -> None:
        self.listen_button.setChecked(self.controller.listening)  # the controller's event sets the truth
        self.controller.toggle_listening()

    def restart_engine(self) -> None:
        """Build the failed engine afresh and listen again (the controller resumes listening)."""
        self.restart_button.hide()
        self.spawn(self.controller.restart_engine())

    def _engine_chosen(self, index: int) -> None:
        choice = copy.deepcopy(self.controller.settings.engine)
        choice.kind = EngineKind(self.engine_selector.itemData(index))
        if choice == self.controller.settings.engine and self.controller.engine_status.state == EngineState.READY:
            return
        self.spawn(self.controller.switch_engine(choice))

    def copy_transcript(self) -> None:
        QApplication.clipboard().setText(self.controller.transcript.text())
        self.statusBar().showMessage("Transcript copied", 3000)

    def clear_transcript(self) -> None:
        self.controller.transcript.clear()
        self.transcript_view.clear_transcript()
        self.utterance_list.clear_utterances()

    def add_panel(self, widget: QWidget, title: str) -> None:
        """Add a tab next to the transcript (actions, history)."""
        self.tabs.addTab(widget, title)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if self._is_hold_key(event) and not event.isAutoRepeat():
            self.controller.hold_pressed()
            return
        super().keyPressEvent(event)

    def keyReleaseEvent(self, event: QKeyEvent) -> None:
        if self._is_hold_key(event) and not event.isAutoRepeat():
            self.controller.hold_released()
            return
        super().keyReleaseEvent(event)

    def _is_hold_key(self, event: QKeyEvent) -> bool:
        hold = self.controller.settings.listening.hold_to_talk_key
        return bool(hold) and QKeySequence(event.keyCombination()) == QKeySequence(hold)

    def closeEvent(self, event: QCloseEvent) -> None:
        event.ignore()
        self.quit_requested.emit()

    # -- what the controller reports -------------------------------------------------------

    def show_level(self, level: AudioLevel) -> None:
        """Show a captured chunk's level on the meter."""
        self._show_reading(self.level_watch.add(level))

    def on_event(self, event: ControllerEvent) -> None:
        if isinstance(event, TranscriptChanged):
            self.transcript_view.show_utterance(event.utterance)
            self.utterance_list.show_utterance(event.utterance)
        elif isinstance(event, UtteranceFinal):
            self._show_latency(event)
        elif isinstance(event, ListeningChanged):
            self._show_listening(event)
        elif isinstance(event, EngineStatus):
            self._show_engine(event)
        elif isinstance(event, CaptureStatus):
            self._show_capture(event)
        elif isinstance(event, Problem):
            self.show_problem(event.message, event.concern)
            if event.offers_restart:
                self.restart_button.show()
        elif isinstance(event, EngineSpeed):
            self.speed_banner.setText(event.message)
            self.speed_banner.setVisible(event.too_slow)
        elif isinstance(event, AudioDropped):
            self.dropped_label.setText(event.message[:1].upper() + event.message[1:])
            self.dropped_label.show()

    def show_problem(self, message: str, concern: Concern = Concern.OTHER) -> None:
        """Show a problem in plain words, below those shown already, until it is dismissed or
        a good outcome of its ``concern`` comes (a problem with a file stays when the engine
        gets ready); a newer problem of the engine or the microphone replaces the older one."""
        if concern is not Concern.OTHER:
            self._problems = {shown: kind for shown, kind in self._problems.items() if kind is not concern}
        self._problems.pop(message, None)
        self._problems[message] = concern
        self._show_problems()

    def dismiss_problems(self) -> None:
        """Hide every problem shown."""
        self._problems.clear()
        self._show_problems()

    def _show_problems(self) -> None:
        self.problem_banner.setText("\n".join(shown[:1].upper() + shown[1:] for shown in self._problems))
        self.problem_row.setVisible(bool(self._problems))

    def show_alarm(self, message: str) -> None:
        """Show an alarm that went off (a timer) until it is dismissed, and ask the desktop to
        draw the user's attention to the window."""
        shown = self.alarm_banner.text()
        self.alarm_banner.setText(f"{shown}\n{message}" if self.alarm_row.isVisible() and shown else message)
        self.alarm_row.show()
        QApplication.alert(self)

    def dismiss_alarm(self) -> None:
        """Hide the alarms shown."""
        self.alarm_row.hide()
        self.alarm_banner.clear()

    def _resolve(self, concern: Concern) -> None:
        """A good outcome of ``concern``: the problems about it end."""
        self._problems = {shown: kind for shown, kind in self._problems.items() if kind is not concern}
        self._show_problems()

    def _show_listening(self, event: ListeningChanged) -> None:
        self.listen_button.setChecked(event.listening)
        self.listen_button.setText("Stop" if event.listening else "Listen")
        self.listen_button.setAccessibleDescription("listening" if event.listening else "not listening")
        if event.listening:
            self.dropped_label.hide()  # each listening session counts afresh
            self.level_watch.start()
            self.meter_timer.start()
        else:
            self.level_watch.stop()
            self.meter_timer.stop()
            self.device_label.setText("not listening")  # the microphone is closed
        self._refresh_meter()
        icon = "voxdesk-listening.svg" if event.listening else "voxdesk.svg"
        self.setWindowIcon(QIcon(str(resource_path("icons", icon))))

    def _refresh_meter(self) -> None:
        self._show_reading(self.level_watch.reading())

    def _show_reading(self, reading: MeterReading) -> None:
        self.meter.show_reading(reading)
        if reading.no_sound and not self.no_sound_hint.isVisible():
            seconds = self.level_watch.no_sound_seconds
            self.no_sound_hint.setText(
                f"No sound from the microphone for {seconds:.0f} s. Is it muted, turned down, or is another "
                "microphone meant? Choose it in Settings (Ctrl+,)."
            )
        self.no_sound_hint.setVisible(reading.no_sound)

    def _show_engine(self, status: EngineStatus) -> None:
        self.engine_selector.setCurrentIndex(self.engine_selector.findData(self.controller.settings.engine.kind))
        words = STATE_WORDS[status.state]
        detail = f": {status.detail}" if status.detail and status.detail != words else ""
        self.engine_status.setText(f"{status.engine}: {words}{detail}")
        self.engine_status.setToolTip(status.detail)
        self.restart_button.setVisible(status.state == EngineState.FAILED)
        loading = status.state == EngineState.LOADING
        if loading:
            self.speed_banner.hide()  # a new engine gets measured afresh
        self.engine_progress.setVisible(loading)
        if loading and status.progress is not None:
            self.engine_progress.setValue(round(status.progress * 100))
        if status.state == EngineState.READY:
            self._resolve(Concern.ENGINE)

    def _show_capture(self, status: CaptureStatus) -> None:
        self.device_label.setText(status.message)
        if status.state == CaptureState.OPEN:
            self._resolve(Concern.MICROPHONE)
        else:
            self.show_problem(status.message, Concern.MICROPHONE)

    def _show_latency(self, event: UtteranceFinal) -> None:
        utterance = event.utterance
        if utterance.first_partial_latency is None or utterance.final_latency is None:
            return
        self._final_latencies.append(utterance.final_latency)
        median = statistics.median(self._final_latencies)
        self.latency_label.setText(
            f"Latency: first text {utterance.first_partial_latency:.2f} s after you started, "
            f"final {utterance.final_latency:.2f} s after you stopped "
            f"(session median {median:.2f} s over {len(self._final_latencies)})"
        )

    def spawn(self, coroutine: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Run a coroutine on the loop, keeping a reference until it is done."""
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task


def _dropped_files(event: QDropEvent) -> list[Path]:
    """The local files (not folders) a drag carries; whether they hold audio is found out later."""
    mime = event.mimeData()
    paths = [Path(url.toLocalFile()) for url in mime.urls() if url.isLocalFile()] if mime.hasUrls() else []
    return [path for path in paths if not path.is_dir()]


def _banner_row(banner: QLabel, dismiss: QPushButton) -> QWidget:
    """A banner with its *Dismiss* button at the right, hidden until there is something to show."""
    row = QWidget()
    layout = QHBoxLayout(row)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(banner, 1)
    layout.addWidget(dismiss)
    row.hide()
    return row
