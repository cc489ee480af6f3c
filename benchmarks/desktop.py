"""Time Voxdesk itself adds in the desktop app: ``python -m benchmarks.desktop``.

The real window (offscreen), the real capture path (a virtual PulseAudio microphone) and the
built-in engine; the synthesized commands are played into the microphone one after another.

- capture → feed: from the PortAudio callback handing a block over to that audio waiting in
  the engine's input feed (loop hand-off, conversion, level, listening session);
- capture → engine: the same, up to the engine reading it (adds the time the engine spends
  before it reads again, e.g. during a final decode);
- event → widget: from the engine yielding a text event to the transcript's viewport
  painting the change (coalescing, controller, bridge signal, rendering);
- committed text → keystrokes: the app in dictation mode typing the passage live into a text
  field in another window (Xvfb, xdotool), from each growth of the committed text reaching the
  dictation to its keystrokes sent (``--no-typing`` leaves it out);
- cold start: a new ``voxdesk`` process (``VOXDESK_SMOKE_TEST=listen``), from its start to the
  window shown, the engine ready, and the first audio captured while listening;
- one partial in a long transcript: the transcript view filled with 1 to 10 minutes of speech
  (150 words a minute, 10 words an utterance), then one partial of the utterance in progress
  shown and painted, the old way (the whole transcript rebuilt as HTML) and the view's way (its
  paragraph edited in place) alternated in one run. ``--partials-only`` runs just this one; it
  needs no microphone and no engine.
"""

from __future__ import annotations

import argparse
import asyncio
import html
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from tests import speech_fixtures
from tests.desktop_rig import VirtualMic, XvfbDisplay
from voxdesk.app.files.transcription import percentile
from voxdesk.app.listening.transcript import Utterance
from voxdesk.engine.events import EngineEvent, ProvisionalText, TextDelta
from voxdesk.engine.session import ProgressCallback, StreamingEngine

if TYPE_CHECKING:
    from PySide6.QtWidgets import QApplication, QTextBrowser

COLD_START_MARKS = ("window shown", "engine ready", "first audio captured")
TRANSCRIPT_MINUTES = (1, 2, 5, 10)
WORDS_PER_MINUTE = 150
WORDS_PER_UTTERANCE = 10
SPOKEN = (
    "open the browser and search for the weather in paris tomorrow then set a timer for five "
    "minutes and remind me to call the office about the meeting notes before lunch"
)


class TimedEngine:
    """Wraps an engine and notes when it reads each chunk and yields each text event."""

    def __init__(self, inner: StreamingEngine) -> None:
        self.inner = inner
        self.name = inner.name
        self.detects_speech = inner.detects_speech
        self.reads: list[tuple[int, float]] = []  # (stream samples read so far, when)
        self.text_events: list[float] = []  # when each text event came out, not yet painted

    async def load(self, progress: ProgressCallback | None = None) -> None:
        await self.inner.load(progress)

    def stream(self, audio: AsyncIterable[np.ndarray]) -> AsyncIterator[EngineEvent]:
        return self._stream(audio)

    async def _stream(self, audio: AsyncIterable[np.ndarray]) -> AsyncIterator[EngineEvent]:
        async def timed_audio() -> AsyncIterator[np.ndarray]:
            samples = 0
            async for chunk in audio:
                samples += len(chunk)
                self.reads.append((samples, time.perf_counter()))
                yield chunk

        async for event in self.inner.stream(timed_audio()):
            if isinstance(event, TextDelta | ProvisionalText) and event.text:
                self.text_events.append(time.perf_counter())
            yield event

    async def aclose(self) -> None:
        await self.inner.aclose()


def summary(values: list[float]) -> dict[str, float | None]:
    ms = [v * 1000 for v in values]
    return {
        "n": len(ms),
        "median_ms": percentile(ms, 50),
        "p90_ms": percentile(ms, 90),
        "p99_ms": percentile(ms, 99),
        "max_ms": max(ms, default=None),
    }


async def live_run(fixtures: list[speech_fixtures.Fixture], mic: VirtualMic) -> dict[str, Any]:
    from PySide6.QtCore import QEvent, QObject

    from tests.app.actions.fakes import recording_services
    from voxdesk.app.engines import build_engine
    from voxdesk.app.listening.capture import AudioCapture
    from voxdesk.app.listening.events import EngineState, UtteranceFinal
    from voxdesk.app.settings import Settings
    from voxdesk.ui.desktop import Desktop

    timed: list[TimedEngine] = []

    def engine_factory(choice: Any) -> StreamingEngine:
        timed.append(TimedEngine(build_engine(choice)))
        return timed[-1]

    captured: list[tuple[int, float]] = []  # (session samples captured so far, PortAudio hand-over)
    painted: list[float] = []
    queued: list[float] = []  # PortAudio hand-over → chunk in the engine's input feed

    desktop = Desktop(Settings(), [], save_changes=False, action_services=recording_services())
    desktop.controller._engine_factory = engine_factory

    class CountingCapture(AudioCapture):
        async def chunks(self) -> AsyncGenerator[tuple[np.ndarray, float], None]:
            samples = 0
            async for chunk, at in super().chunks():
                samples += len(chunk)
                captured.append((samples, at))
                yield chunk, at
                # The listening session asks for the next chunk once this one is in the engine's feed.
                queued.append(time.perf_counter() - at)

    desktop.controller._capture_factory = CountingCapture

    class PaintWatcher(QObject):
        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Paint and timed and timed[-1].text_events:
                now = time.perf_counter()
                painted.extend(now - at for at in timed[-1].text_events)
                timed[-1].text_events.clear()
            return False

    watcher = PaintWatcher()
    desktop.window.transcript_view.viewport().installEventFilter(watcher)
    finals: list[UtteranceFinal] = []
    desktop.controller.subscribe(lambda e: finals.append(e) if isinstance(e, UtteranceFinal) else None)
    run = asyncio.ensure_future(desktop.run())
    while desktop.controller.engine_status.state != EngineState.READY:
        await asyncio.sleep(0.05)
    desktop.controller.start_listening()
    await asyncio.sleep(1.0)
    for fixture in fixtures:
        before = len(finals)
        player = mic.play(speech_fixtures.DEFAULT_DIR / fixture.path)
        await asyncio.to_thread(player.wait)
        while len(finals) == before:
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.3)
    await desktop.controller.stop_listening()
    desktop.quit()
    await run

    capture_times = dict(captured)
    to_engine = [at - capture_times[samples] for samples, at in timed[-1].reads if samples in capture_times]
    return {
        "capture_to_feed": summary(queued),
        "capture_to_engine": summary(to_engine),
        "event_to_widget": summary(painted),
        "utterances": len(finals),
        "final_latency_median_s": percentile(
            [f.utterance.final_latency for f in finals if f.utterance.final_latency], 50
        ),
    }


async def typing_run(
    passage: speech_fixtures.Fixture, mic: VirtualMic, display: str, field_out: Path
) -> dict[str, Any]:
    """Dictation typed live into a real text field on ``display``: committed text → keystrokes."""
    from tests.text_field import TextField, dictation_settings, typing_services
    from voxdesk.app.actions.center import ActionStatus
    from voxdesk.app.listening.events import EngineState, UtteranceFinal
    from voxdesk.ui.desktop import Desktop

    os.environ["DISPLAY"] = display
    field = TextField(display, field_out)
    desktop = Desktop(dictation_settings(), [], save_changes=False, action_services=typing_services())
    spoken: list[UtteranceFinal] = []
    desktop.controller.subscribe(
        lambda e: spoken.append(e) if isinstance(e, UtteranceFinal) and e.utterance.committed.strip() else None
    )
    center = desktop.assistant.center
    try:
        run = asyncio.ensure_future(desktop.run())
        while desktop.controller.engine_status.state != EngineState.READY:
            await asyncio.sleep(0.05)
        desktop.controller.start_listening()
        await asyncio.sleep(1.0)
        player = mic.play(speech_fixtures.DEFAULT_DIR / passage.path)
        await asyncio.to_thread(player.wait)
        await desktop.controller.stop_listening()
        while sum(r.command == "dictation" and r.status is ActionStatus.DONE for r in center.records) < len(spoken):
            await asyncio.sleep(0.05)  # the last finals' keys
        desktop.quit()
        await run
    finally:
        field.close()
    return {"committed_to_keys": summary(center.dictation.latencies), "typed_words": len(field.text().split())}


def old_way_render(view: QTextBrowser, utterances: dict[int, Utterance], provisional_colour: str) -> None:
    """The transcript view before it edited its document in place: every partial rebuilt the
    whole transcript as HTML and set it (its actions left out: these transcripts have none)."""
    bar = view.verticalScrollBar()
    paragraphs = []
    for utterance in utterances.values():
        committed = html.escape(utterance.committed.strip())
        tail = html.escape(utterance.provisional.strip())
        if tail:
            tail = f' <i style="color:{provisional_colour}">{tail}</i>'
        if committed or tail:
            paragraphs.append(f"<p>{committed}{tail}</p>")
    view.setHtml("".join(paragraphs))
    bar.setValue(bar.maximum())


def spoken(utterance: int, words: int) -> str:
    """``words`` words of a made-up sentence, a different stretch for each utterance."""
    vocabulary = SPOKEN.split()
    start = utterance * 7 % len(vocabulary)
    return " ".join((vocabulary * 2)[start : start + words])


def partial_of(utterance: int, heard: int) -> Utterance:
    """The utterance in progress after ``heard`` words, the last two of them still provisional."""
    committed = max(0, heard - 2)
    words = spoken(utterance, heard).split()
    return Utterance(utterance, committed=" ".join(words[:committed]), provisional=" ".join(words[committed:]))


def painted(view: QTextBrowser) -> None:
    """Lay out the whole document and paint what is in view. Qt lays out a big document in
    steps between events, so without asking for the last block a new document would be laid
    out only in part when the time is taken."""
    document = view.document()
    document.documentLayout().blockBoundingRect(document.lastBlock())
    view.viewport().repaint()


def partial_costs(repeats: int) -> list[dict[str, float]]:
    """Milliseconds to show and paint one partial, the old way and the view's way, in
    transcripts of each of ``TRANSCRIPT_MINUTES``; medians of ``repeats`` partials."""
    from PySide6.QtWidgets import QTextBrowser

    from voxdesk.ui.transcript_view import TranscriptView

    rows = []
    for minutes in TRANSCRIPT_MINUTES:
        count = minutes * WORDS_PER_MINUTE // WORDS_PER_UTTERANCE
        finals = {n: Utterance(n, committed=spoken(n, WORDS_PER_UTTERANCE), final=True) for n in range(1, count + 1)}
        old, new = QTextBrowser(), TranscriptView()
        for view in (old, new):
            view.resize(880, 360)  # about the window's transcript pane
            view.show()
        for utterance in finals.values():
            new.show_utterance(utterance)
        grey = new.provisional_colour().name()
        in_progress = count + 1
        partials = [partial_of(in_progress, repeat % WORDS_PER_UTTERANCE + 1) for repeat in range(repeats)]
        old_times, new_times = [], []
        for partial in partials:
            started = time.perf_counter()
            new.show_utterance(partial)
            painted(new)
            new_times.append(time.perf_counter() - started)
        for partial in partials:
            started = time.perf_counter()
            old_way_render(old, {**finals, in_progress: partial}, grey)
            painted(old)
            old_times.append(time.perf_counter() - started)
        assert old.toPlainText() == new.toPlainText()  # the same transcript shown both ways
        rows.append(
            {
                "minutes": minutes,
                "utterances": count + 1,
                "old_way_median_ms": statistics.median(old_times) * 1000,
                "new_way_median_ms": statistics.median(new_times) * 1000,
            }
        )
        old.close()
        new.close()
    return rows


def print_partial_costs(rows: list[dict[str, float]]) -> None:
    print("one partial, shown and painted (median ms)")
    print(f"{'minutes':>8} {'utterances':>10} {'old way (setHtml)':>18} {'new way (in place)':>19}")
    for row in rows:
        print(
            f"{row['minutes']:>8} {row['utterances']:>10} "
            f"{row['old_way_median_ms']:>18.2f} {row['new_way_median_ms']:>19.2f}"
        )


def cold_start() -> dict[str, float]:
    """One new ``voxdesk`` process, listening at once: seconds from its start to each mark."""
    started = time.monotonic()
    child = subprocess.run(
        [sys.executable, "-m", "voxdesk.ui.launcher"],
        env={**os.environ, "VOXDESK_SMOKE_TEST": "listen"},
        capture_output=True,
        text=True,
        timeout=180,
        check=True,
    )
    line = next(line for line in child.stdout.splitlines() if line.startswith("voxdesk smoke test: "))
    marks = json.loads(line.removeprefix("voxdesk smoke test: "))
    return {name: marks[name] - started for name in COLD_START_MARKS}


def live_and_cold_starts(app: QApplication, cold_starts: int, typing: bool) -> dict[str, Any]:
    """The live run on the virtual microphone, the typing run (with ``typing``), then
    ``cold_starts`` new processes."""
    home = Path(tempfile.mkdtemp(prefix="voxdesk-bench-"))
    os.environ.setdefault("VOXDESK_CONFIG_DIR", str(home / "config"))
    os.environ.setdefault("VOXDESK_DATA_DIR", str(home / "data"))

    mic = VirtualMic(home / "vmic")
    mic.start()
    os.environ.update(mic.environment)
    display = XvfbDisplay(home / "xvfb")
    try:
        catalogue = speech_fixtures.build()
        fixtures = [f for f in catalogue if f.kind == "command" and f.voice == "slt"]
        import qasync

        loop = qasync.QEventLoop(app)
        asyncio.set_event_loop(loop)
        with loop:
            live = loop.run_until_complete(live_run(fixtures, mic))
            if typing:
                (passage,) = [f for f in catalogue if f.name == "passage-slt"]
                typed = loop.run_until_complete(typing_run(passage, mic, display.start(), home / "field.txt"))
        starts = [cold_start() for _ in range(cold_starts)]
    finally:
        mic.stop()
        display.stop()
    return {
        "live": live,
        **({"typing": typed} if typing else {}),
        "cold_start_s": {name: percentile([s[name] for s in starts], 50) for name in COLD_START_MARKS},
        "cold_starts": len(starts),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cold-starts", type=int, default=3, help="cold starts to time (default: %(default)s)")
    parser.add_argument("--partials", type=int, default=40, help="partials timed per length (default: %(default)s)")
    parser.add_argument("--no-typing", action="store_true", help="leave out the live typing run")
    parser.add_argument("--partials-only", action="store_true", help="time only one partial in long transcripts")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    app = QApplication(sys.argv[:1])
    results = {} if args.partials_only else live_and_cold_starts(app, args.cold_starts, not args.no_typing)
    results["partial_ms"] = partial_costs(args.partials)
    print(json.dumps(results, indent=2))
    print_partial_costs(results["partial_ms"])
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
