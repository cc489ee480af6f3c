"""Run the real window on an X display, queue audio files as a drop would, and save a picture
of the Files tab while the second file is being transcribed.
Usage: python -m tests.ui.file_queue_screenshot OUT.png AUDIO [AUDIO...]

Needs DISPLAY (Xvfb) in the environment; the test that runs it sets it. Prints the first
file's transcript on the last line, for the test to check.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from tests.ui.screenshots import run_script
from voxdesk.app.files.queue import FileJob, JobState
from voxdesk.ui.desktop import Desktop


async def scenario(desktop: Desktop, out: Path, files: list[Path]) -> str:
    run = asyncio.ensure_future(desktop.run())
    taken = asyncio.Event()

    def picture(job: FileJob) -> None:
        """Grab the window as the second file's progress is drawn: the batched path reports a
        batch's utterances at once, so a later look could find it finished."""
        first, second, *_ = desktop.assistant.files.jobs
        if job is second and first.state.finished and 0.2 < (second.fraction or 0) < 0.9 and not taken.is_set():
            desktop.window.grab().save(str(out))
            taken.set()

    desktop.assistant.files.subscribe(picture)  # after the Files tab's own listener: the row is up to date
    desktop.transcribe_files(files)  # what a drop or File > Transcribe file… does
    await taken.wait()
    first = desktop.assistant.files.jobs[0]
    text = first.outcome.text if first.state == JobState.DONE and first.outcome is not None else ""
    desktop.quit()
    await run
    return text


if __name__ == "__main__":
    sys.exit(run_script(scenario))
