"""Shared plumbing of the screenshot scripts (run as their own process under Xvfb) and of the
tests that run them."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import qasync
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication

from tests.app.actions.fakes import recording_services
from tests.serve_process import REPO
from voxdesk.app.settings import load_settings
from voxdesk.ui.desktop import Desktop

Scenario = Callable[[Desktop, Path, list[Path]], Coroutine[Any, Any, str]]


def run_script(scenario: Scenario) -> int:
    """``main`` of a screenshot script: ``OUT.png AUDIO...`` from argv, the real window on the
    qasync loop, and the text the scenario returns printed as the last line."""
    out, audio = Path(sys.argv[1]), [Path(p) for p in sys.argv[2:]]
    app = QApplication(sys.argv[:1])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    settings, _ = load_settings()
    desktop = Desktop(settings, [], save_changes=False, action_services=recording_services())
    with loop:
        text = loop.run_until_complete(scenario(desktop, out, audio))
    print(text)
    return 0


def take_screenshot(module: str, out: Path, audio: list[Path], display: str, timeout: float = 180) -> str:
    """Run the screenshot script ``module`` on ``display`` (killed after ``timeout`` seconds);
    the last line it printed."""
    out.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb"}
    result = subprocess.run(
        [sys.executable, "-m", module, str(out), *map(str, audio)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout.strip().splitlines()[-1]


def assert_looks_like_a_window(picture: Path) -> None:
    """The picture is window-sized and not blank."""
    image = QImage(str(picture))
    assert image.width() >= 800 and image.height() >= 500
    colours = {image.pixel(x, y) for x in range(0, image.width(), 7) for y in range(0, image.height(), 7)}
    assert len(colours) > 8, f"{picture} looks blank ({len(colours)} colours)"
