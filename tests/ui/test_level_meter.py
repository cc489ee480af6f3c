"""The VU meter and the no-sound hint on the real microphone path (silence, then speech played
into the virtual microphone), and what the meter paints."""

from __future__ import annotations

import asyncio

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage
from pytestqt.qtbot import QtBot

from tests.conftest import fixture_path
from tests.desktop_rig import VirtualMic
from tests.speech_fixtures import Fixture
from tests.ui.test_desktop_live import listen, start_desktop, stop_desktop
from voxdesk.app.listening.capture import AudioLevel
from voxdesk.app.listening.level import LevelWatch
from voxdesk.app.settings import Settings
from voxdesk.ui.level_meter import CLIP_COLOUR, GREEN, LevelMeter


def test_silent_microphone_gets_a_hint_that_speech_clears(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, virtual_mic: VirtualMic, speech: dict[str, Fixture]
) -> None:
    desktop, _, run = start_desktop(qtbot, Settings())
    window = desktop.window
    listen(qtbot, desktop)  # the virtual microphone delivers digital silence until something plays
    assert not window.no_sound_hint.isVisible()
    qtbot.waitUntil(window.no_sound_hint.isVisible, timeout=8_000)
    assert window.no_sound_hint.text().startswith("No sound from the microphone for 4 s")
    loudest: list[float] = []
    window.meter_timer.timeout.connect(lambda: loudest.append(window.meter.reading.rms_db))
    virtual_mic.play(fixture_path(speech["command00-slt"]))
    qtbot.waitUntil(lambda: not window.no_sound_hint.isVisible(), timeout=5_000)
    qtbot.waitUntil(lambda: max(loudest, default=-60) > -35, timeout=5_000)
    qtbot.mouseClick(window.listen_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not desktop.controller.listening, timeout=10_000)
    assert not window.no_sound_hint.isVisible() and window.meter.reading.rms_db == -60
    stop_desktop(qtbot, desktop, run)


def painted(qtbot: QtBot, audio: np.ndarray) -> QImage:
    watch = LevelWatch()
    watch.start()
    meter = LevelMeter()
    qtbot.addWidget(meter)
    meter.resize(300, 30)
    for start in range(0, len(audio) - 320 + 1, 320):
        meter.show_reading(watch.add(AudioLevel.of(audio[start : start + 320])))
    return meter.grab().toImage()


def share_of(image: QImage, colour: QColor, rows: range) -> float:
    hits = sum(1 for x in range(image.width()) for y in rows if QColor(image.pixel(x, y)).rgb() == colour.rgb())
    return hits / (image.width() * len(rows))


def test_meter_paints_speech_green_and_clipping_red(qtbot: QtBot, fixture_audio: dict[str, np.ndarray]) -> None:
    voice = fixture_audio["command00-slt"]
    chunks = voice[: len(voice) // 320 * 320].reshape(-1, 320)
    loudest = int(np.argmax(np.sqrt(np.mean(np.square(chunks), axis=1))))
    normal = painted(qtbot, voice[: (loudest + 1) * 320])  # the meter as the loudest moment is heard
    assert share_of(normal, GREEN, range(4, 11)) > 0.05
    assert share_of(normal, CLIP_COLOUR, range(4, 11)) < 0.01
    overdriven = painted(qtbot, np.clip(voice * 8, -1.0, 1.0))
    lamp = overdriven.copy(overdriven.width() - 30, 2, 26, 10)
    assert share_of(lamp, CLIP_COLOUR, range(lamp.height())) > 0.3
