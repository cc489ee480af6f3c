"""Starting the desktop app: Qt application, asyncio on the Qt loop, window, tray, shortcuts."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QMenu, QSystemTrayIcon

from voxdesk.app.actions import ActionRecord, Services
from voxdesk.app.api_keys import load_with_keys, save_with_keys
from voxdesk.app.assistant import Assistant
from voxdesk.app.first_run import cuda_device, is_first_run
from voxdesk.app.history.store import HistoryError, HistoryStore
from voxdesk.app.hotkeys import GlobalHotkeys
from voxdesk.app.listening.capture import AudioLevel, MicrophoneUnavailable, list_input_devices
from voxdesk.app.listening.events import ControllerEvent, ListeningChanged, ListenTrigger, Problem
from voxdesk.app.listening.overlay import OverlayFeed
from voxdesk.app.log import configure_logging, log_folder
from voxdesk.app.resources import resource_path
from voxdesk.app.settings import Settings
from voxdesk.engine.errors import EngineUnavailable
from voxdesk.engine.kinds import EngineKind
from voxdesk.engine.whisper.catalog import model_choices
from voxdesk.ui import smoke_test
from voxdesk.ui.actions_panel import ActionsPanel
from voxdesk.ui.desktop_services import DesktopNotifier, QtClipboard
from voxdesk.ui.dictation_overlay import DictationOverlay
from voxdesk.ui.file_queue import FileQueuePanel
from voxdesk.ui.first_run import FirstRunDialog
from voxdesk.ui.history_panel import HistoryPanel
from voxdesk.ui.main_window import MainWindow
from voxdesk.ui.settings_dialog import SettingsDialog

__all__ = ["Desktop", "DesktopOptions", "display_problem", "run_desktop"]

logger = logging.getLogger("voxdesk.desktop")


@dataclass(frozen=True)
class DesktopOptions:
    """Command-line overrides of the saved settings, for this run only."""

    engine: str | None = None
    server: str | None = None
    device: str | None = None

    def apply(self, settings: Settings) -> None:
        if self.server:
            settings.engine.kind, settings.engine.server_url = EngineKind.REMOTE, self.server
        if self.engine:
            settings.engine.kind = EngineKind(self.engine)
        if self.device is not None:
            settings.audio.device = self.device


def display_problem() -> str | None:
    """Why no window can open here (one line), or ``None``."""
    if not sys.platform.startswith("linux") or os.environ.get("QT_QPA_PLATFORM"):
        return None
    if os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        return None
    return (
        "voxdesk: no display found (DISPLAY and WAYLAND_DISPLAY are unset), so the window cannot open; "
        "without a screen use `voxdesk transcribe FILE` or `voxdesk serve`"
    )


class Desktop:
    """The window, tray and shortcuts, joined to the :class:`Assistant` they drive."""

    def __init__(
        self,
        settings: Settings,
        warnings: list[str],
        *,
        save_changes: bool = True,
        action_services: Services | None = None,
        first_run: bool = False,
    ) -> None:
        """``action_services`` replaces the desktop's real opener, launcher, keyboard... (tests);
        ``first_run`` opens the set-up dialog when the window shows."""
        self.settings = settings
        self.save_changes = save_changes
        self.first_run = first_run
        self.setup_dialog: FirstRunDialog | None = None
        services = action_services or Services()
        services.clipboard = services.clipboard or QtClipboard()
        self.history_panel, history_store, history_problem = self._open_history()
        self.assistant = Assistant(settings, services, history_store)
        self.controller = self.assistant.controller
        self.hotkeys = self._make_hotkeys()
        self.window = MainWindow(self.controller)
        self.window.settings_requested.connect(self.open_settings)
        self.window.setup_requested.connect(self.open_setup)
        self.window.quit_requested.connect(self.quit)
        if self.history_panel is not None:
            self.history_panel.rewriter = self.assistant.center.rewrite
            self.history_panel.refresh()  # the rewriter enables Run again
            self.window.add_panel(self.history_panel, "&History")
        if history_problem:
            self.window.show_problem(history_problem)
        self.tray = self._make_tray()
        services.notifier = services.notifier or DesktopNotifier(self.tray)
        self.assistant.center.add_mode_listener(self._remember_mode)
        self.assistant.center.add_alarm_listener(self.window.show_alarm)
        self.window.add_panel(ActionsPanel(self.assistant.center), "&Actions")
        self.window.attach_actions(self.assistant.center)
        self.files_panel = FileQueuePanel(self.assistant.files)
        self.window.add_panel(self.files_panel, "&Files")
        self.window.transcribe_requested.connect(self.transcribe_files)
        self.files_panel.show_session_requested.connect(self.show_session)
        self.overlay = DictationOverlay()
        self.overlay.show_mode(self.assistant.center.dictation.choice.label)
        self.assistant.center.dictation.add_choice_listener(lambda choice: self.overlay.show_mode(choice.label))
        self.overlay_feed = OverlayFeed(lambda: self.controller.settings.listening.overlay)
        self.controller.subscribe(self._follow_for_overlay)
        self.controller.subscribe_levels(self._level_for_overlay)
        self.assistant.center.add_record_listener(self._action_for_overlay)
        self._quit = asyncio.Event()
        for warning in warnings:
            logger.warning("%s", warning)  # in the log too: the window's banner can be dismissed
            self.window.show_problem(warning)

    def _open_history(self) -> tuple[HistoryPanel | None, HistoryStore | None, str]:
        """The history panel and the live session's store, each its own connection, and what opening found
        (a damaged file recovered, a read-only folder); else why not."""
        history = self.settings.history

        def open_store() -> HistoryStore:
            return HistoryStore.open(keep=history.keep, retention_days=history.retention_days)

        try:
            store = open_store()  # before the panel's: a damaged file is recovered here, and store.notice says so
        except HistoryError as exc:
            return None, None, f"history is off for this run: {exc}"
        try:
            return HistoryPanel(open_store), store, store.notice
        except HistoryError as exc:
            store.close()
            return None, None, f"history is off for this run: {exc}"

    def transcribe_files(self, paths: list[Path]) -> None:
        """Queue files for transcription and show the Files tab."""
        self.assistant.files.add(paths)
        self.window.tabs.setCurrentWidget(self.files_panel)

    def show_session(self, session_id: int) -> None:
        """Show a history session (a transcribed file) in the History tab."""
        if self.history_panel is None:
            return
        self.history_panel.search_box.clear()
        self.history_panel.refresh()
        if self.history_panel.select_session(session_id):
            self.window.tabs.setCurrentWidget(self.history_panel)

    def _level_for_overlay(self, level: AudioLevel) -> None:
        self.overlay.show_reading(self.window.level_watch.reading())  # the window's meter took the level first

    def _follow_for_overlay(self, event: ControllerEvent) -> None:
        if self.overlay_feed.on_event(event):
            self.overlay.show_state(self.overlay_feed.state, self.controller.listening)

    def _action_for_overlay(self, record: ActionRecord) -> None:
        if self.overlay_feed.on_record(record):
            self.overlay.show_state(self.overlay_feed.state, self.controller.listening)

    def _remember_mode(self, mode: str) -> None:
        self.controller.settings.actions.mode = mode
        if self.save_changes:
            try:
                save_with_keys(self.controller.settings)
            except OSError as exc:
                self.window.show_problem(f"could not save the settings: {exc}")

    def _make_hotkeys(self) -> GlobalHotkeys:
        settings = self.controller.settings  # the newest: the settings dialog replaces it
        listening = settings.listening
        return GlobalHotkeys(
            listening.toggle_shortcut,
            listening.hold_to_talk_key,
            on_toggle=lambda: self.controller.toggle_listening(ListenTrigger.GLOBAL_SHORTCUT),
            on_hold_press=self.controller.hold_pressed,
            on_hold_release=self.controller.hold_released,
            mode_shortcuts=settings.writing.mode_shortcuts,
            on_mode=self.assistant.center.dictation.toggle,
        )

    def _make_tray(self) -> QSystemTrayIcon | None:
        if not QSystemTrayIcon.isSystemTrayAvailable():
            return None
        tray = QSystemTrayIcon(QIcon(str(resource_path("icons", "voxdesk.svg"))), self.window)
        tray.setToolTip("Voxdesk")
        menu = QMenu(self.window)
        listen = menu.addAction("Listen")
        listen.triggered.connect(lambda: self.controller.toggle_listening())
        menu.addAction("Show window").triggered.connect(self.window.showNormal)
        menu.addSeparator()
        menu.addAction("Quit").triggered.connect(self.quit)
        tray.setContextMenu(menu)
        tray.activated.connect(lambda reason: self.controller.toggle_listening())

        def follow(event: ControllerEvent) -> None:
            if isinstance(event, ListeningChanged):
                listen.setText("Stop listening" if event.listening else "Listen")
                icon = "voxdesk-listening.svg" if event.listening else "voxdesk.svg"
                tray.setIcon(QIcon(str(resource_path("icons", icon))))

        self.controller.subscribe(follow)
        tray.show()
        return tray

    async def run(self) -> None:
        """Show the window, load the engine, and run until the user quits."""
        self.window.show()
        if self.first_run:
            self.open_setup()
        self.window.shortcut_note = self.hotkeys.start() or ""
        if self.window.shortcut_note:
            self.window.statusBar().showMessage(self.window.shortcut_note, 10000)
        await self.assistant.start()
        await self._quit.wait()
        self.hotkeys.stop()
        await self.assistant.aclose()
        if self.history_panel is not None:
            self.history_panel.close_store()
        if self.tray is not None:
            self.tray.hide()
        self.overlay.hide()
        self.window.hide()

    def quit(self) -> None:
        self._quit.set()

    def open_settings(self) -> None:
        try:
            devices = [d.name for d in list_input_devices(refresh=not self.controller.listening)]
        except MicrophoneUnavailable as exc:
            devices = []
            self.window.show_problem(str(exc))
        try:
            models = model_choices()
        except EngineUnavailable as exc:
            models = []
            self.window.show_problem(str(exc))
        dialog = SettingsDialog(self.controller.settings, devices, self.window.shortcut_note, self.window, models)
        dialog.accepted.connect(lambda: self.window.spawn(self.apply_settings(dialog.settings())))
        dialog.open()

    def open_setup(self) -> FirstRunDialog:
        """Open the set-up dialog: microphone check and playback, engine choice."""
        try:
            devices = [d.name for d in list_input_devices(refresh=not self.controller.listening)]
        except MicrophoneUnavailable as exc:
            devices = []
            self.window.show_problem(str(exc))
        dialog = FirstRunDialog(self.controller.settings, devices, cuda_device(), self.window)
        dialog.accepted.connect(lambda: self.window.spawn(self.apply_settings(dialog.settings())))
        dialog.rejected.connect(self._setup_skipped)
        self.setup_dialog = dialog
        dialog.open()
        return dialog

    def _setup_skipped(self) -> None:
        """Skipped on the first start: the defaults are saved, so it is not asked again."""
        if self.save_changes and is_first_run():
            try:
                save_with_keys(self.controller.settings)
            except OSError as exc:
                self.window.show_problem(f"could not save the settings: {exc}")

    async def apply_settings(self, settings: Settings) -> None:
        """Save and use new settings; shortcuts restart when they changed."""
        if self.save_changes:
            try:
                save_with_keys(settings)
            except OSError as exc:
                self.window.show_problem(f"could not save the settings: {exc}")
        old = self.controller.settings
        shortcuts_changed = (settings.listening, settings.writing.mode_shortcuts) != (
            old.listening,
            old.writing.mode_shortcuts,
        )
        await self.assistant.apply_settings(settings)
        if shortcuts_changed:
            self.hotkeys.stop()
            self.hotkeys = self._make_hotkeys()
            self.window.shortcut_note = self.hotkeys.start() or ""

    def handle_loop_exception(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        """An error nobody caught: logged in full, shown in plain words, the app keeps running."""
        error = context.get("exception")
        logger.error("unexpected error: %s", context.get("message"), exc_info=error)
        self.controller.report(Problem(f"something went wrong: {error or context.get('message')}"))


def run_desktop(options: DesktopOptions, log_level: str | None = None) -> int:
    """Open the window and run until it is closed; the process exit status.

    Logs go to stderr and to ``voxdesk.log`` in :func:`log_folder`, at ``log_level``, else
    ``VOXDESK_LOG``, else INFO.
    """
    if problem := display_problem():
        print(problem, file=sys.stderr)
        return 2
    log_file = log_folder() / "voxdesk.log"
    configure_logging(log_level, log_file=log_file, default="INFO")
    logger.info("window starting; logging to %s", log_file)
    import qasync

    first_run = is_first_run() and not os.environ.get("VOXDESK_SMOKE_TEST")  # installer checks run unattended
    settings, warnings = load_with_keys()
    options.apply(settings)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setApplicationName("Voxdesk")
    app.setDesktopFileName("voxdesk")
    app.setQuitOnLastWindowClosed(False)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    terminated = asyncio.Event()  # SIGTERM or Ctrl+C: quit as Ctrl+Q does (finish, close history)
    for signal_number in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError):  # Windows has no loop signal handlers
            loop.add_signal_handler(signal_number, terminated.set)
    desktop = Desktop(settings, warnings, save_changes=True, first_run=first_run)
    smoke_test.install_from_environment(desktop.controller, desktop.window, desktop.quit)
    loop.set_exception_handler(desktop.handle_loop_exception)
    sys.excepthook = lambda kind, value, trace: desktop.handle_loop_exception(
        loop, {"message": "error in a window handler", "exception": value}
    )

    async def run_until_quit() -> None:
        quit_on_signal = asyncio.ensure_future(terminated.wait())
        quit_on_signal.add_done_callback(lambda _: desktop.quit())
        await desktop.run()
        quit_on_signal.cancel()

    with loop:
        loop.run_until_complete(run_until_quit())
    return 0
