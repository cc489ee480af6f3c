"""The dictation overlay with the real system-wide shortcut (xdotool key presses on Xvfb reach
pynput) and real speech from the virtual microphone. The first test's widgets are offscreen,
where Qt activates every window it shows, so focus is checked by the second, on Xvfb."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from tests.conftest import fixture_path
from tests.desktop_rig import VirtualMic
from tests.recognition import assert_heard_in
from tests.serve_process import REPO
from tests.speech_fixtures import Fixture
from tests.ui.screenshots import assert_looks_like_a_window, take_screenshot
from tests.ui.test_desktop_live import SPEECH_TIMEOUT_MS, start_desktop, stop_desktop
from voxdesk.app.listening.events import ListeningChanged, ListenTrigger
from voxdesk.app.settings import Settings


def press(display: str, *keys: str) -> None:
    subprocess.run(["xdotool", *keys], env={**os.environ, "DISPLAY": display}, check=True, timeout=10)


def test_global_shortcut_and_hold_to_talk_show_the_overlay_the_button_does_not_and_it_fades(
    qtbot: QtBot,
    qloop: asyncio.AbstractEventLoop,
    virtual_mic: VirtualMic,
    x_display: str,
    speech: dict[str, Fixture],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DISPLAY", x_display)  # pynput listens on Xvfb; the widgets stay offscreen
    monkeypatch.delenv("XDG_SESSION_TYPE", raising=False)
    desktop, recorder, run = start_desktop(qtbot, Settings())
    overlay, window = desktop.overlay, desktop.window
    assert window.shortcut_note == ""  # the system-wide shortcuts are listening

    # Listening from the window's button: no overlay.
    qtbot.mouseClick(window.listen_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: desktop.controller.listening, timeout=5_000)
    assert not overlay.isVisible()
    qtbot.mouseClick(window.listen_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not desktop.controller.listening, timeout=10_000)

    press(x_display, "key", "ctrl+alt+space")  # the system-wide shortcut, pressed on the X server
    qtbot.waitUntil(overlay.isVisible, timeout=5_000)
    starts = [e for _, e in recorder.of(ListeningChanged) if isinstance(e, ListeningChanged) and e.listening]
    assert starts[-1].trigger is ListenTrigger.GLOBAL_SHORTCUT
    flags = overlay.windowFlags()
    for flag in (Qt.WindowType.WindowDoesNotAcceptFocus, Qt.WindowType.Tool, Qt.WindowType.WindowStaysOnTopHint):
        assert flags & flag, flag
    assert overlay.testAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating)
    assert overlay.mode.text() == window.mode_chip.text() == "Writing: plain"
    desktop.assistant.center.dictation.toggle("code")  # a mode's shortcut: the overlay shows the mode too
    assert overlay.mode.text() == window.mode_chip.text() == "Writing: code (hotkey)"
    desktop.assistant.center.dictation.toggle("code")
    command = speech["command01-slt"]
    virtual_mic.play(fixture_path(command))
    qtbot.waitUntil(lambda: bool(overlay.text.text()) and "listening" not in overlay.text.text(), timeout=10_000)
    qtbot.waitUntil(lambda: bool(overlay.action.text()), timeout=SPEECH_TIMEOUT_MS)
    assert_heard_in(command, overlay.text.text())
    assert overlay.action.text().startswith("search (query: ")  # the action's outcome under the text
    assert overlay.isVisible() and not overlay.fading()  # still listening: it stays

    press(x_display, "key", "ctrl+alt+space")  # stop: the overlay fades after the final
    qtbot.waitUntil(overlay.fading, timeout=10_000)
    opacities: list[float] = []

    def gone() -> bool:
        opacities.append(overlay.windowOpacity())
        return not overlay.isVisible()

    qtbot.waitUntil(gone, timeout=5_000)
    assert min(opacities) < 1.0

    # Hold-to-talk: shown while the key is held, faded after release.
    press(x_display, "keydown", "F9")
    qtbot.waitUntil(overlay.isVisible, timeout=5_000)
    assert overlay.windowOpacity() == 1.0
    press(x_display, "keyup", "F9")
    qtbot.waitUntil(lambda: not overlay.isVisible(), timeout=15_000)
    stop_desktop(qtbot, desktop, run)
    press(x_display, "key", "shift")  # a stopped pynput listener's thread ends at the next key event


def test_on_xvfb_the_overlay_leaves_the_focus_on_the_field_that_receives_the_dictation(
    virtual_mic: VirtualMic, x_display: str, speech: dict[str, Fixture]
) -> None:
    command = speech["command01-slt"]
    out = REPO / "build" / "screenshots" / "voxdesk-overlay.png"
    result = json.loads(take_screenshot("tests.ui.overlay_screenshot", out, [fixture_path(command)], x_display))
    assert result["focused"] == "dictation-target" and result["qt_focus_in_field"], result
    assert_heard_in(command, result["typed"])  # typed by xdotool into the window that kept the focus
    assert_heard_in(command, result["overlay_text"])
    assert "into “dictation-target”" in result["overlay_action"]
    assert result["faded"], result
    assert_looks_like_a_window(out)
