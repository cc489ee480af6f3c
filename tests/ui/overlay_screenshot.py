"""Dictate into another window with the system-wide shortcut on an X display, and save a
screenshot with the overlay. Usage: python -m tests.ui.overlay_screenshot OUT.png WAV

Needs DISPLAY (Xvfb) and PULSE_SERVER (the virtual microphone); the test that runs it sets
both. A text field in its own window has the X input focus; the shortcut is pressed with
xdotool, the phrase played into the microphone is typed (dictation mode, xdotool) into the
field. Prints, on the last line, JSON: the focused window's name while the overlay showed,
the field's text, the overlay's text and whether the overlay faded after the stop.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import qasync
from PySide6.QtWidgets import QApplication, QLineEdit

from tests.app.actions.fakes import recording_services
from voxdesk.app.actions.keyboard import XdotoolKeyboard
from voxdesk.app.listening.events import UtteranceFinal
from voxdesk.app.settings import Settings
from voxdesk.ui.desktop import Desktop

TARGET = "dictation-target"


async def xdotool(*args: str) -> str:
    done = await asyncio.to_thread(subprocess.run, ["xdotool", *args], capture_output=True, text=True, check=True)
    return done.stdout.strip()


async def until(condition: object, timeout: float) -> None:
    async with asyncio.timeout(timeout):
        while not condition():  # type: ignore[operator]
            await asyncio.sleep(0.05)


async def scenario(desktop: Desktop, field: QLineEdit, out: Path, recording: Path) -> dict[str, object]:
    finals: asyncio.Queue[UtteranceFinal] = asyncio.Queue()
    desktop.controller.subscribe(lambda event: finals.put_nowait(event) if isinstance(event, UtteranceFinal) else None)
    run = asyncio.ensure_future(desktop.run())
    await until(lambda: desktop.controller.engine_status.state.value == "ready", 60)
    desktop.window.move(360, 90)
    await xdotool("search", "--sync", "--name", TARGET, "windowfocus", "--sync")
    desktop.assistant.center.set_mode("dictation")
    await xdotool("key", "ctrl+alt+space")
    await until(desktop.overlay.isVisible, 10)
    await asyncio.sleep(1.0)
    await asyncio.to_thread(subprocess.run, ["paplay", "--device=vmic_sink", str(recording)], check=True)
    await asyncio.wait_for(finals.get(), 20)
    await until(lambda: bool(field.text().strip()), 20)
    focused = await xdotool("getwindowfocus", "getwindowname")
    await asyncio.sleep(0.4)
    await asyncio.to_thread(subprocess.run, ["import", "-window", "root", str(out)], check=True)
    desktop.overlay.grab().save(str(out.with_suffix(".overlay.png")))
    result: dict[str, object] = {
        "focused": focused,
        "qt_focus_in_field": QApplication.focusWidget() is field,
        "typed": field.text(),
        "overlay_text": desktop.overlay.text.text(),
        "overlay_action": desktop.overlay.action.text(),
    }
    await xdotool("key", "ctrl+alt+space")
    try:
        await until(lambda: not desktop.overlay.isVisible(), 15)
        result["faded"] = True
    except TimeoutError:
        result["faded"] = False
    desktop.quit()
    await run
    return result


def main() -> int:
    out, recording = Path(sys.argv[1]), Path(sys.argv[2])
    app = QApplication(sys.argv[:1])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    field = QLineEdit()
    field.setWindowTitle(TARGET)
    field.setGeometry(20, 20, 640, 48)
    field.show()
    services = recording_services()
    services.keyboard = XdotoolKeyboard()
    desktop = Desktop(Settings(), [], save_changes=False, action_services=services)
    with loop:
        result = loop.run_until_complete(scenario(desktop, field, out, recording))
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
