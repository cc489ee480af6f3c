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

from tests.ui.screenshots import run_script
from voxdesk.app.listening.events import UtteranceFinal
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


if __name__ == "__main__":
    sys.exit(run_script(scenario))
