"""Run the real window on an X display, speak a phrase into the virtual microphone, and save a
screenshot of the screen. Usage: python -m tests.ui.window_screenshot OUT.png WAV [WAV...]

Needs DISPLAY (Xvfb) and PULSE_SERVER (the virtual microphone) in the environment; the test
that runs it sets both. Prints the transcript on the last line, for the test to check.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import qasync
from PySide6.QtWidgets import QApplication

from tests.app.actions.fakes import recording_services
from voxdesk.app.listening.events import UtteranceFinal
from voxdesk.app.settings import load_settings
from voxdesk.ui.desktop import Desktop


async def scenario(desktop: Desktop, out: Path, recordings: list[Path]) -> str:
    finals: asyncio.Queue[UtteranceFinal] = asyncio.Queue()
    desktop.controller.subscribe(lambda event: finals.put_nowait(event) if isinstance(event, UtteranceFinal) else None)
    run = asyncio.ensure_future(desktop.run())
    while desktop.controller.engine_status.state.value != "ready":
        await asyncio.sleep(0.05)
    desktop.window.listen_button.click()
    await asyncio.sleep(1.0)
    for recording in recordings:
        await asyncio.to_thread(subprocess.run, ["paplay", "--device=vmic_sink", str(recording)], check=True)
        await asyncio.wait_for(finals.get(), 20)
    await asyncio.sleep(0.5)
    desktop.window.grab().save(str(out.with_suffix(".window.png")))
    await asyncio.to_thread(subprocess.run, ["import", "-window", "root", str(out)], check=True)
    text = desktop.controller.transcript.text().replace("\n", " ")
    desktop.quit()
    await run
    return text


def main() -> int:
    out, recordings = Path(sys.argv[1]), [Path(p) for p in sys.argv[2:]]
    app = QApplication(sys.argv[:1])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    settings, _ = load_settings()
    desktop = Desktop(settings, [], save_changes=False, action_services=recording_services())
    with loop:
        text = loop.run_until_complete(scenario(desktop, out, recordings))
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
