"""Run the real window on an X display, queue audio files as a drop would, and save a screenshot
of the Files tab while the second file is being transcribed.
Usage: python -m tests.ui.file_queue_screenshot OUT.png AUDIO [AUDIO...]

Needs DISPLAY (Xvfb) in the environment; the test that runs it sets it. Prints the first
file's transcript on the last line, for the test to check.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import qasync
from PySide6.QtWidgets import QApplication

from tests.app.actions.fakes import recording_services
from voxdesk.app.files.queue import JobState
from voxdesk.app.settings import load_settings
from voxdesk.ui.desktop import Desktop


async def scenario(desktop: Desktop, out: Path, files: list[Path]) -> str:
    run = asyncio.ensure_future(desktop.run())
    desktop.transcribe_files(files)  # what a drop or File > Transcribe file… does
    first, second, *_ = desktop.assistant.files.jobs
    while not (first.state.finished and second.state == JobState.RUNNING and 0.2 < (second.fraction or 0) < 0.9):
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.2)  # let the window paint the last change
    desktop.window.grab().save(str(out.with_suffix(".window.png")))
    await asyncio.to_thread(subprocess.run, ["import", "-window", "root", str(out)], check=True)
    text = first.outcome.text if first.outcome is not None else ""
    desktop.quit()
    await run
    return text


def main() -> int:
    out, files = Path(sys.argv[1]), [Path(p) for p in sys.argv[2:]]
    app = QApplication(sys.argv[:1])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    settings, _ = load_settings()
    desktop = Desktop(settings, [], save_changes=False, action_services=recording_services())
    with loop:
        text = loop.run_until_complete(scenario(desktop, out, files))
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
