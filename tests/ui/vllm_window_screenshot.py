"""Run the real window with the in-process vLLM engine (local GPU mode) on an X display: speak a
phrase into the virtual microphone, save a screenshot, switch to the built-in engine and back,
speaking once on each. Usage: python -m tests.ui.vllm_window_screenshot OUT.png WAV WAV

Needs DISPLAY (Xvfb), PULSE_SERVER (the virtual microphone), vllm and settings naming the vLLM
engine and its model; tests/ui/test_desktop_vllm.py sets them. Prints what the window showed as
one JSON line, for the test to check.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.ui.screenshots import run_script
from voxdesk.app.listening.events import ControllerEvent, EngineState, EngineStatus, TranscriptChanged, UtteranceFinal
from voxdesk.engine import EngineKind
from voxdesk.ui.desktop import Desktop

LOAD_TIMEOUT = 300.0
SPEECH_TIMEOUT = 90.0


async def until(condition: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the window did not get there in time")
        await asyncio.sleep(0.05)


class Watcher:
    """The controller's events, and what one utterance showed."""

    def __init__(self, desktop: Desktop) -> None:
        self.desktop = desktop
        self.events: list[tuple[float, ControllerEvent]] = []
        desktop.controller.subscribe(lambda event: self.events.append((time.perf_counter(), event)))

    def finals(self) -> list[UtteranceFinal]:
        return [event for _, event in self.events if isinstance(event, UtteranceFinal)]

    async def engine(self, kind: EngineKind) -> dict[str, Any]:
        """Wait until ``kind`` is ready; the loading steps and progress it showed."""
        start = len(self.events)
        controller = self.desktop.controller
        await until(lambda: controller.settings.engine.kind == kind and controller.engine_status.state
                    in (EngineState.READY, EngineState.FAILED), LOAD_TIMEOUT)  # fmt: skip
        loading = [e for _, e in self.events[start:] if isinstance(e, EngineStatus) and e.state == EngineState.LOADING]
        return {
            "state": controller.engine_status.state.value,
            "status_label": self.desktop.window.engine_status.text(),
            "steps": [e.detail for e in loading],
            "progress": [e.progress for e in loading],
        }

    async def utterance(self, recording: Path) -> dict[str, Any]:
        """Play ``recording`` into the microphone and wait for its final; what the window showed."""
        start, finals = len(self.events), len(self.finals())
        await asyncio.to_thread(subprocess.run, ["paplay", "--device=vmic_sink", str(recording)], check=True)
        played = time.perf_counter()
        await until(lambda: len(self.finals()) > finals, SPEECH_TIMEOUT)
        final_at, final = next((at, e) for at, e in self.events[start:] if isinstance(e, UtteranceFinal))
        assert isinstance(final, UtteranceFinal)
        partials = [
            (at, e.utterance.committed + e.utterance.provisional)
            for at, e in self.events[start:]
            if isinstance(e, TranscriptChanged) and not e.utterance.final and at < final_at
        ]
        window = self.desktop.window
        return {
            "texts_before_final": [text for _, text in partials],
            "first_text_before_playback_ended": bool(partials) and partials[0][0] < played,
            "final": final.utterance.committed,
            "first_latency": final.utterance.first_partial_latency,
            "final_latency": final.utterance.final_latency,
            "final_after_playback": final_at - played,
            "transcript": window.transcript_view.committed_text(),
            "latency_label": window.latency_label.text(),
            "rows": window.utterance_list.topLevelItemCount(),
        }


async def switch(desktop: Desktop, kind: EngineKind) -> None:
    """Choose ``kind`` in the window's engine selector, as a click would."""
    selector = desktop.window.engine_selector
    selector.setCurrentIndex(selector.findData(kind))
    selector.activated.emit(selector.currentIndex())
    await asyncio.sleep(0)


async def scenario(desktop: Desktop, out: Path, recordings: list[Path]) -> str:
    watcher = Watcher(desktop)
    report: dict[str, Any] = {}
    run = asyncio.ensure_future(desktop.run())
    report["vllm_load"] = await watcher.engine(EngineKind.VLLM)
    if report["vllm_load"]["state"] == "ready":
        desktop.window.listen_button.click()
        await asyncio.sleep(1.0)
        report["vllm"] = await watcher.utterance(recordings[0])
        await asyncio.sleep(0.5)
        desktop.window.grab().save(str(out.with_suffix(".window.png")))
        await asyncio.to_thread(subprocess.run, ["import", "-window", "root", str(out)], check=True)
        await switch(desktop, EngineKind.BUILTIN)
        report["builtin_load"] = await watcher.engine(EngineKind.BUILTIN)
        report["builtin"] = await watcher.utterance(recordings[1])
        await switch(desktop, EngineKind.VLLM)
        report["vllm_again_load"] = await watcher.engine(EngineKind.VLLM)
        report["vllm_again"] = await watcher.utterance(recordings[0])
    desktop.quit()
    await run
    return json.dumps(report)


if __name__ == "__main__":
    sys.exit(run_script(scenario))
