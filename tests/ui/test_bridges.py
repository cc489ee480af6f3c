"""The controller's bridge: the audio level, 50 a second, has a signal of its own, so that only
the meter is woken by it."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from voxdesk.app.listening.capture import AudioLevel
from voxdesk.app.listening.controller import Controller
from voxdesk.app.listening.events import ControllerEvent, ListeningChanged
from voxdesk.app.settings import Settings
from voxdesk.ui.main_window import MainWindow


def test_the_audio_level_reaches_the_meter_and_no_other_listener(qtbot: QtBot) -> None:
    controller = Controller(Settings())
    window = MainWindow(controller)
    qtbot.addWidget(window)
    woken: list[ControllerEvent] = []
    window.bridge.happened.connect(woken.append)
    controller.subscribe(woken.append)
    controller.report(ListeningChanged(True))
    for _ in range(50):  # a second of 20 ms chunks
        controller.report(AudioLevel(rms=0.1, peak=0.5))
    assert woken == [ListeningChanged(True), ListeningChanged(True)]
    assert round(window.meter.reading.rms_db) == -20
