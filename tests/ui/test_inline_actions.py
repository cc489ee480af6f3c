"""Actions shown in the transcript under the utterance that matched them, with their status
updated live and Confirm / Cancel / Undo by link and by keyboard shortcut."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor
from pytestqt.qtbot import QtBot

from tests.app.actions.fakes import RecordingKeyboard, RecordingNotifier, StaticProbe, recording_services
from tests.conftest import fixture_path
from tests.desktop_rig import VirtualMic
from tests.speech_fixtures import Fixture
from tests.ui.test_desktop_live import listen, play_and_wait_for_final, start_desktop, stop_desktop
from voxdesk.app.actions.center import ActionCenter, ActionRecord, ActionStatus
from voxdesk.app.actions.commands import CommandSource, user_commands_path
from voxdesk.app.actions.focus import FocusedApp
from voxdesk.app.listening.controller import Controller
from voxdesk.app.listening.events import TranscriptChanged
from voxdesk.app.listening.transcript import Utterance
from voxdesk.app.settings import ActionSettings, Settings
from voxdesk.ui.main_window import MainWindow
from voxdesk.ui.transcript_view import ACTION_LINK, TranscriptView

CONFIRMED_TIMER = """
[commands.timer]
action = "timer"
phrases = ["set a timer for {n:number} {unit:minutes|seconds|hours}"]
confirm = true
"""


def click_link(qtbot: QtBot, view: TranscriptView, verb: str, record_id: int) -> None:
    """Click the link where it is drawn, as a user would."""
    href = f"{ACTION_LINK}:{verb}/{record_id}"
    block = view.document().begin()
    while block.isValid():
        fragments = block.begin()
        while not fragments.atEnd():
            fragment = fragments.fragment()
            if fragment.charFormat().anchorHref() == href:
                cursor = QTextCursor(view.document())
                cursor.setPosition(fragment.position() + fragment.length() // 2)
                view.ensureCursorVisible()
                view.setTextCursor(cursor)
                view.ensureCursorVisible()
                point = view.cursorRect(cursor).center()
                qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=point)
                return
            fragments += 1
        block = block.next()
    raise AssertionError(f"no {verb} link for action {record_id} in {view.toPlainText()!r}")


def links(view: TranscriptView) -> set[str]:
    found = set()
    block = view.document().begin()
    while block.isValid():
        fragments = block.begin()
        while not fragments.atEnd():
            if href := fragments.fragment().charFormat().anchorHref():
                found.add(href)
            fragments += 1
        block = block.next()
    return found


@pytest.fixture
def window(qtbot: QtBot, tmp_path: Path) -> tuple[Controller, MainWindow, ActionCenter]:
    user = tmp_path / "commands.toml"
    user.write_text(CONFIRMED_TIMER)
    center = ActionCenter(ActionSettings(), recording_services(), commands=CommandSource(user_path=user))
    controller = Controller(Settings())
    main = MainWindow(controller)
    main.attach_actions(center)
    qtbot.addWidget(main)
    main.show()
    return controller, main, center


def say(qtbot: QtBot, controller: Controller, center: ActionCenter, number: int, text: str) -> ActionRecord:
    """A final utterance in the transcript, handed to the center as the controller's would be."""
    controller.report(TranscriptChanged(Utterance(number, committed=text, start=0, end=1, final=True)))
    future = asyncio.ensure_future(center.handle_utterance(text, number))
    qtbot.waitUntil(future.done, timeout=10_000)
    record = future.result()
    assert record is not None
    return record


def test_links_confirm_cancel_and_undo(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, window: tuple[Controller, MainWindow, ActionCenter]
) -> None:
    controller, main, center = window
    view = main.transcript_view
    timer = say(qtbot, controller, center, 1, "Set a timer for 5 minutes.")
    assert view.action_text(1) == "timer (n: 5, unit: minutes) — waiting for confirmation: Set a timer for 5 minutes"
    assert links(view) == {f"{ACTION_LINK}:confirm/{timer.id}", f"{ACTION_LINK}:cancel/{timer.id}"}
    click_link(qtbot, view, "confirm", timer.id)
    qtbot.waitUntil(lambda: center.record(timer.id).status is ActionStatus.DONE, timeout=5_000)
    assert view.action_text(1).startswith("timer (n: 5, unit: minutes) — done: ")
    assert links(view) == {f"{ACTION_LINK}:undo/{timer.id}"}
    click_link(qtbot, view, "undo", timer.id)
    qtbot.waitUntil(lambda: "— undone" in view.action_text(1), timeout=5_000)
    assert links(view) == set()

    second = say(qtbot, controller, center, 2, "Set a timer for 10 seconds.")
    click_link(qtbot, view, "cancel", second.id)
    qtbot.waitUntil(lambda: view.action_text(2).endswith("— cancelled"), timeout=5_000)
    assert view.committed_text() == "Set a timer for 5 minutes.\nSet a timer for 10 seconds."
    assert "— undone" in view.action_text(1)  # each utterance keeps its own action


def test_shortcuts_act_on_the_newest_action(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, window: tuple[Controller, MainWindow, ActionCenter]
) -> None:
    controller, main, center = window
    view = main.transcript_view
    first = say(qtbot, controller, center, 1, "set a timer for 2 minutes")
    second = say(qtbot, controller, center, 2, "set a timer for 3 minutes")
    qtbot.keyClick(main, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: view.action_text(2).startswith("timer (n: 3, unit: minutes) — done"), timeout=5_000)
    assert center.record(first.id).status is ActionStatus.WAITING
    qtbot.keyClick(main, Qt.Key.Key_Backspace, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: view.action_text(1).endswith("— cancelled"), timeout=5_000)
    qtbot.keyClick(main, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: center.record(second.id).status is ActionStatus.UNDONE, timeout=5_000)
    assert "— undone" in view.action_text(2)
    qtbot.keyClick(main, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert main.statusBar().currentMessage() == "No action to undo"


def test_dictation_shows_where_the_text_went(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, window: tuple[Controller, MainWindow, ActionCenter]
) -> None:
    controller, main, center = window
    keyboard = center.services.keyboard
    assert isinstance(keyboard, RecordingKeyboard)
    keyboard.window = "notes.txt - Editor"
    center.set_mode("dictation")
    say(qtbot, controller, center, 1, "Dear Anna,")
    assert main.transcript_view.action_text(1) == (
        "dictation — done: typed 11 characters into “notes.txt - Editor” with recording"
    )
    assert keyboard.text == "Dear Anna, "


def test_a_failed_action_says_why(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, window: tuple[Controller, MainWindow, ActionCenter]
) -> None:
    controller, main, center = window
    center.services.notifier = None  # no notifications on this desktop: a timer cannot work
    timer = say(qtbot, controller, center, 1, "set a timer for 4 minutes")
    qtbot.keyClick(main, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: center.record(timer.id).status is ActionStatus.FAILED, timeout=5_000)
    line = main.transcript_view.action_text(1)
    assert line.endswith("— failed: timers need desktop notifications, the window or spoken replies, and none is here")


def test_spoken_command_waits_in_the_transcript_then_confirm_and_undo(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, virtual_mic: VirtualMic, speech: dict[str, Fixture]
) -> None:
    """The real path: speech into the virtual microphone, the built-in engine, the action center."""
    command = speech["command09-slt"]
    assert command.text == "set a timer for five minutes"
    user_commands_path().parent.mkdir(parents=True, exist_ok=True)
    user_commands_path().write_text(CONFIRMED_TIMER)
    desktop, recorder, run = start_desktop(qtbot, Settings())
    view, center = desktop.window.transcript_view, desktop.assistant.center
    listen(qtbot, desktop)
    play_and_wait_for_final(qtbot, virtual_mic, recorder, fixture_path(command))
    qtbot.waitUntil(lambda: bool(center.records), timeout=10_000)
    (record,) = center.records
    utterance = record.utterance_id
    assert utterance is not None and record.command == "timer"
    assert view.action_text(utterance).startswith("timer (n: 5, unit: minutes) — waiting for confirmation")
    click_link(qtbot, view, "confirm", record.id)
    qtbot.waitUntil(lambda: center.record(record.id).status is ActionStatus.DONE, timeout=5_000)
    assert "— done: " in view.action_text(utterance)
    qtbot.keyClick(desktop.window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: "— undone" in view.action_text(utterance), timeout=5_000)
    notifier = center.services.notifier
    assert isinstance(notifier, RecordingNotifier) and notifier.notifications == []
    stop_desktop(qtbot, desktop, run)


def test_the_status_bar_shows_the_writing_mode_and_why_it_was_chosen(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, window: tuple[Controller, MainWindow, ActionCenter]
) -> None:
    controller, main, center = window
    assert main.mode_chip.text() == "Writing: plain"
    center.dictation.toggle("code")
    assert main.mode_chip.text() == "Writing: code (hotkey)"
    center.dictation.toggle("code")
    assert isinstance(center.services.focus, StaticProbe)
    center.services.focus.app = FocusedApp("slack", "Slack")
    center.set_mode("dictation")
    say(qtbot, controller, center, 1, "See you soon.")
    assert main.mode_chip.text() == "Writing: message (Slack)"
