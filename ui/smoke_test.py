"""``VOXDESK_SMOKE_TEST`` (installer tests and timings; not for users): the window quits by itself.

With ``VOXDESK_SMOKE_TEST=1`` the app quits as Ctrl+Q does once the engine is ready or has
failed, after printing one line on stdout, ``voxdesk smoke test: {...}``: ``time.monotonic()``
marks "window shown" and "engine ready" (or "engine failed" and its "problem").
``VOXDESK_SMOKE_TEST=listen`` also starts listening at once and quits when the microphone
delivers audio ("first audio captured") or fails. installers/smoke_test.py,
tests/installers and benchmarks/desktop.py read that line.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable

from voxdesk.app.listening.capture import CaptureState, CaptureStatus
from voxdesk.app.listening.controller import Controller
from voxdesk.app.listening.events import ControllerEvent, EngineState, EngineStatus, Problem
from voxdesk.ui.main_window import MainWindow

__all__ = ["install_from_environment"]


def install_from_environment(controller: Controller, window: MainWindow, quit_app: Callable[[], None]) -> None:
    """Watch the app as ``VOXDESK_SMOKE_TEST`` asks, ``quit_app`` when done; nothing when it is unset."""
    if mode := os.environ.get("VOXDESK_SMOKE_TEST"):
        _watch(controller, window, quit_app, mode)


def _watch(controller: Controller, window: MainWindow, quit_app: Callable[[], None], mode: str) -> None:
    marks: dict[str, object] = {}

    def finish() -> None:
        print(f"voxdesk smoke test: {json.dumps(marks)}", flush=True)
        quit_app()

    def note(event: ControllerEvent) -> None:
        if "done" in marks:
            return
        if isinstance(event, EngineStatus) and event.state == EngineState.LOADING and "window shown" not in marks:
            marks["window shown"] = time.monotonic()  # run() shows the window, then loads the engine
            marks["window visible"] = window.isVisible()
            if mode == "listen":
                controller.start_listening()  # starts when the engine is ready
        elif isinstance(event, EngineStatus) and event.state in (EngineState.READY, EngineState.FAILED):
            marks[f"engine {event.state.value}"] = time.monotonic()
            marks["shortcut note"] = window.shortcut_note  # why system-wide keys are off, if they are
            if event.state == EngineState.FAILED:
                marks["problem"] = event.detail
            if mode != "listen" or event.state == EngineState.FAILED:
                marks["done"] = True
                finish()
        elif isinstance(event, CaptureStatus) and mode == "listen":
            if event.state == CaptureState.LOST:
                marks["problem"] = event.message
            else:
                marks["first audio captured"] = time.monotonic()
            marks["done"] = True
            finish()
        elif isinstance(event, Problem) and mode == "listen" and "engine ready" in marks:
            marks["problem"] = event.message
            marks["done"] = True
            finish()

    controller.subscribe(note)
