"""Soak of the desktop's listening path: the real controller and listening session on the built-in
engine, writing the history as the window does (``LiveHistory`` on a real SQLite file), fed speech
faster than real time for as long as asked.

Only the microphone is faked: :class:`ReplayCapture` replays the speech fixtures (the one-phrase
commands, looped) in 20 ms blocks, as PortAudio would deliver them, but with no wait between blocks.
After each phrase and its trailing second of silence it waits for that phrase's final text (or
``TURN_TIMEOUT``), so the engine's backlog never overflows and nothing is dropped: the pace is as
fast as the engine transcribes. The time axis is the audio fed, so the slopes are per hour of speech.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Callable
from pathlib import Path
from typing import Any

import numpy as np

from tests.soak.sampling import Bound, SoakResult, brief, fit_slope, process_resources
from tests.speech_fixtures import DEFAULT_DIR, build
from voxdesk.app.files.reading import read_audio
from voxdesk.app.history.live import LiveHistory
from voxdesk.app.history.store import HistoryStore
from voxdesk.app.listening.capture import BLOCK_SECONDS, AudioCapture, AudioLevel, CaptureState, CaptureStatus
from voxdesk.app.listening.controller import Controller
from voxdesk.app.listening.events import AudioDropped, ControllerEvent, Problem, UtteranceFinal
from voxdesk.app.settings import Settings
from voxdesk.engine.session import SAMPLE_RATE

__all__ = ["BOUNDS", "Replay", "ReplayCapture", "soak_controller"]

TURN_TIMEOUT = 20.0  # a phrase with no final text by then counts as missed, and the next one plays
# Samples go by the audio fed, not by wall time: a fast machine feeds a short run in seconds.
SAMPLE_AUDIO_SECONDS = 15.0  # audio fed between samples, at most
SAMPLES_AT_LEAST = 12  # a short run is sampled more densely
BOUNDS = [
    Bound("rss_mib", "MiB", 4.0, 12.0, "a day's 8 h of listening may cost 32 MiB; floor: arenas after the warm-up"),
    Bound("fds", "fds", 0.0, 3.0, "a descriptor per session or utterance would pass 3 at once"),
    Bound("threads", "threads", 0.0, 3.0, "pools are made at load; none may grow with use"),
    Bound("tasks", "tasks", 0.0, 5.0, "a session runs one consumer task; a leak grows by utterance"),
    Bound("final_latency_s", "s", 0.25, 3.0, "0.4 s median on a free box; floor: a shared box's load (1-5 s seen)"),
]
MIN_FINAL_SHARE = 0.95  # phrases that must get a final text: the engine keeps transcribing


class Replay:
    """The phrases to replay, how much has been fed, and the finals heard (the capture's turn gate)."""

    def __init__(self, phrases: list[np.ndarray], audio_seconds: float) -> None:
        self.phrases = phrases
        self.audio_seconds = audio_seconds  # stop after this much audio
        self.fed_seconds = 0.0
        self.played = 0
        self.finals = 0
        self.missed = 0
        self._heard = asyncio.Event()
        self.over = False  # every phrase was fed and its final waited for
        self._fed = asyncio.Event()

    def heard_final(self) -> None:
        self.finals += 1
        self._heard.set()

    def phrase_fed(self, seconds: float) -> None:
        self.played += 1
        self.fed_seconds += seconds
        self._fed.set()

    def end(self) -> None:
        self.over = True
        self._fed.set()

    async def fed_past(self, seconds: float) -> None:
        """Until ``seconds`` of audio were fed or the replay is over, or ``TURN_TIMEOUT`` passes
        with no phrase fed."""
        while self.fed_seconds < seconds and not self.over:
            self._fed.clear()
            try:
                async with asyncio.timeout(TURN_TIMEOUT):
                    await self._fed.wait()
            except TimeoutError:
                return

    async def until_final(self) -> None:
        """Until the finals catch up with the phrases played, or ``TURN_TIMEOUT``."""
        deadline = time.monotonic() + TURN_TIMEOUT
        while self.finals + self.missed < self.played:
            self._heard.clear()
            try:
                async with asyncio.timeout(max(0.0, deadline - time.monotonic())):
                    await self._heard.wait()
            except TimeoutError:
                self.missed += 1
                return


class ReplayCapture(AudioCapture):
    """FAKE microphone (there is no sound card here): replays :class:`Replay`'s phrases in 20 ms
    blocks, reporting levels and its opening like the real capture, one phrase per turn."""

    def __init__(self, replay: Replay, device: str = "", **kwargs: Any) -> None:
        super().__init__(device, **kwargs)
        self._replay = replay

    async def chunks(self) -> AsyncGenerator[tuple[np.ndarray, float], None]:
        replay, block = self._replay, int(BLOCK_SECONDS * SAMPLE_RATE)
        self.device_in_use = "replay"
        self._report(CaptureStatus(CaptureState.OPEN, "replay", "listening on the replayed speech"))
        while replay.fed_seconds < replay.audio_seconds:
            phrase = replay.phrases[replay.played % len(replay.phrases)]
            for begin in range(0, len(phrase), block):
                chunk = phrase[begin : begin + block]
                self._on_level(AudioLevel.of(chunk))
                yield chunk, time.perf_counter()
                await asyncio.sleep(0)  # the engine's decodes hand over their results between blocks
            replay.phrase_fed(len(phrase) / SAMPLE_RATE)
            await replay.until_final()
        replay.end()


def load_phrases(directory: Path = DEFAULT_DIR) -> list[np.ndarray]:
    """The one-phrase fixtures (commands, held-out commands), each with its lead and trailing silence."""
    return [read_audio(directory / f.path) for f in build(directory) if f.kind in ("command", "held-out")]


async def soak_controller(
    audio_minutes: float,
    history_path: Path,
    on_sample: Callable[[str], None] = lambda line: None,
    distinct: int | None = None,
) -> SoakResult:
    """Feed ``audio_minutes`` of speech through the controller; the samples, bounds and checks.
    ``distinct`` phrases (all by default) are looped; the first pass over them is the warm-up (the
    engine's memory grows until it has decoded each length once) and is not sampled."""
    result = SoakResult("controller", "audio fed", BOUNDS)
    phrases = load_phrases()[:distinct]
    replay = Replay(phrases, audio_minutes * 60)
    warm_up = min(replay.audio_seconds / 2, sum(len(p) for p in phrases) / SAMPLE_RATE)
    latencies: list[float] = []
    problems: list[str] = []
    dropped: list[float] = []

    def listen(event: ControllerEvent) -> None:
        if isinstance(event, UtteranceFinal):
            if event.utterance.final_latency is not None:
                latencies.append(event.utterance.final_latency)
            replay.heard_final()
        elif isinstance(event, Problem):
            problems.append(event.message)
        elif isinstance(event, AudioDropped):
            dropped.append(event.seconds)

    controller = Controller(Settings(), capture_factory=lambda *a, **k: ReplayCapture(replay, *a, **k))
    store = HistoryStore.open(history_path)
    history = LiveHistory(controller, store)
    controller.subscribe(listen)
    finals_seen = 0
    try:
        if not await controller.load_engine():
            raise RuntimeError(f"the built-in engine did not load: {problems}")
        controller.start_listening()

        def sample() -> None:
            nonlocal finals_seen
            values = process_resources()
            values["tasks"] = float(len(asyncio.all_tasks()))
            recent = latencies[finals_seen:]
            finals_seen = len(latencies)
            if recent:
                values["final_latency_s"] = float(np.median(recent))
            values["history_rows"] = float(store.counts()[1])
            values["finals"] = float(replay.finals)
            result.add(replay.fed_seconds / 3600, values)
            on_sample(f"{replay.fed_seconds / 60:6.1f} audio min: {brief(values)}")

        await replay.fed_past(warm_up)
        every = min(SAMPLE_AUDIO_SECONDS, (replay.audio_seconds - warm_up) / SAMPLES_AT_LEAST)
        mark = warm_up
        while controller.listening and not replay.over:
            sample()
            mark += every
            await replay.fed_past(mark)
        await controller.stop_listening()
        sample()
    finally:
        await controller.aclose()
        history.unsubscribe()
    rows = store.counts()[1]
    store.close()
    finals = replay.finals
    behind = [s.hours for s in result.samples if s.values["history_rows"] != s.values["finals"]]
    rate = fit_slope([s.hours for s in result.samples], [s.values["history_rows"] for s in result.samples])
    result.check(
        "history rows",
        rows == finals and not behind,
        f"{rows} rows written, {finals} utterances final; {rate:.0f} rows/h, "
        f"equal to the finals at {len(result.samples) - len(behind)} of {len(result.samples)} samples",
    )
    share = finals / max(1, replay.played)
    result.check(
        "finals",
        share >= MIN_FINAL_SHARE and not dropped,
        f"{finals} finals for {replay.played} phrases ({share:.1%}, at least {MIN_FINAL_SHARE:.0%}); "
        f"{replay.missed} timed out; {dropped[-1] if dropped else 0:.1f} s of audio dropped",
    )
    result.check("problems", not problems, f"{len(problems)} reported" + (f": {problems[:3]}" if problems else ""))
    return result
