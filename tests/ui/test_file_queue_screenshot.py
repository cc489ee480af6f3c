"""A screenshot of the Files tab in the real window under Xvfb, for the README."""

from __future__ import annotations

import os
import subprocess
import sys

from PySide6.QtGui import QImage

from tests.conftest import fixture_path
from tests.recognition import assert_recognized
from tests.serve_process import REPO
from tests.speech_fixtures import Fixture


def test_screenshot_of_the_file_queue_under_xvfb(x_display: str, speech: dict[str, Fixture]) -> None:
    out = REPO / "build" / "screenshots" / "voxdesk-file-queue.png"
    out.parent.mkdir(parents=True, exist_ok=True)
    names = ("command09-slt", "long-slt", "passage-slt", "command01-slt")
    files = [str(fixture_path(speech[name])) for name in names]
    env = {**os.environ, "DISPLAY": x_display, "QT_QPA_PLATFORM": "xcb"}
    result = subprocess.run(
        [sys.executable, "-m", "tests.ui.file_queue_screenshot", str(out), *files],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert_recognized(speech["command09-slt"], result.stdout.strip().splitlines()[-1])
    image = QImage(str(out))
    assert image.width() >= 800 and image.height() >= 500
    colours = {image.pixel(x, y) for x in range(0, image.width(), 7) for y in range(0, image.height(), 7)}
    assert len(colours) > 8, f"{out} looks blank ({len(colours)} colours)"
