"""Latency per dialect of one ``voxdesk serve`` (built-in engine): vLLM's ``/v1/realtime``,
OpenAI Realtime and Wyoming, each through Voxdesk's own client engine, side by side with the
same engine called in-process; part of ``python -m benchmarks.realtime``.

Each command fixture is cut as the window cuts an utterance for a gated engine (from 0.4 s
before the speech to 0.6 s after it, the default silence) and is one stream, fed at real-time
pace in 100 ms chunks: through each dialect in turn (the order rotates from fixture to fixture,
so machine load falls on all alike). Per stream, as the window measures them: *first text*,
from the moment the audio at the start of speech was delivered to the first text the client
shows (provisional or committed), and *final*, from the moment the audio at the end of speech
was delivered to the final text (so it includes the 0.6 s of silence the stream carries after
the speech). Each dialect's added latency is its median minus the in-process one.
"""

from __future__ import annotations

import contextlib
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tests import speech_fixtures
from tests.speech_fixtures import Fixture
from voxdesk.app.files.reading import read_audio
from voxdesk.app.files.transcription import percentile, transcribe_audio
from voxdesk.engine import StreamingEngine
from voxdesk.engine.events import ProvisionalText, TextDelta, UtteranceDone
from voxdesk.engine.remote.openai import OpenAIRealtimeEngine, OpenAISettings
from voxdesk.engine.remote.realtime import VllmRealtimeEngine, VllmRealtimeSettings
from voxdesk.engine.remote.wyoming import WyomingEngine, WyomingSettings
from voxdesk.engine.session import SAMPLE_RATE
from voxdesk.engine.whisper.builtin import BuiltinEngine, BuiltinSettings
from voxdesk.engine.whisper.decoder import DecoderSettings

__all__ = ["DialectLatency", "measure_dialects", "print_dialects"]

REPO = Path(__file__).resolve().parent.parent
IN_PROCESS = "in-process"


@dataclass
class DialectLatency:
    """Seconds per stream for one way of reaching the engine."""

    first_text: list[float] = field(default_factory=list)
    final: list[float] = field(default_factory=list)


@contextlib.contextmanager
def serve_with_wyoming() -> Iterator[tuple[int, int]]:
    """``voxdesk serve`` (built-in engine) with ``--wyoming``: its WebSocket and Wyoming ports."""
    command = ["-m", "voxdesk.cli.main", "serve", "--port", "0", "--wyoming", "tcp://127.0.0.1:0"]
    process = subprocess.Popen([sys.executable, *command], cwd=REPO, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    ports: dict[str, int] = {}
    for line in process.stderr:
        if match := re.search(r"listening on ws://[\d.]+:(\d+)/", line):
            ports["ws"] = int(match.group(1))
        if match := re.search(r"Wyoming on tcp://[\d.]+:(\d+)", line):
            ports["wyoming"] = int(match.group(1))
            break
    threading.Thread(target=process.stderr.read, daemon=True).start()
    try:
        yield ports["ws"], ports["wyoming"]
    finally:
        process.terminate()
        process.wait(timeout=30)


PRE_ROLL = 0.4  # the window starts a gated stream this long before the detected onset
SILENCE = 0.6  # and ends it after this much silence (the default silence_ms)


def utterance(fixture: Fixture) -> np.ndarray:
    """The fixture's audio as the window would stream it: pre-roll, speech, the ending silence."""
    audio = read_audio(speech_fixtures.DEFAULT_DIR / fixture.path)
    (start, end), *_ = fixture.speech
    return audio[int((start - PRE_ROLL) * SAMPLE_RATE) : int((end + SILENCE) * SAMPLE_RATE)]


async def _one_stream(engine: StreamingEngine, audio: np.ndarray) -> tuple[float, float]:
    """First text after the start of speech, and final text after its end, in seconds.

    Audio is delivered at real-time pace from wall time 0, so the audio at ``t`` seconds was
    delivered at wall time ``t`` (within a chunk).
    """
    report = await transcribe_audio(engine, audio, realtime=True)
    timeline = report.timeline
    texts = [t.wall_time for t in timeline if isinstance(t.event, TextDelta | ProvisionalText) and t.event.text]
    finals = [t.wall_time for t in timeline if isinstance(t.event, UtteranceDone) and t.event.text]
    first = texts[0] if texts else report.wall_seconds
    final = finals[-1] if finals else report.wall_seconds
    speech_end = len(audio) / SAMPLE_RATE - SILENCE
    return first - PRE_ROLL, final - speech_end


async def measure_dialects(quick: bool) -> dict[str, DialectLatency]:
    """Every command fixture through each dialect and in-process, rotating the order."""
    fixtures = [f for f in speech_fixtures.build() if f.name.startswith("command")]
    fixtures = fixtures[::4] if quick else fixtures
    local = BuiltinEngine(BuiltinSettings(decoder=DecoderSettings(model="tiny.en", device="cpu")))
    await local.load()
    results: dict[str, DialectLatency] = {}
    with serve_with_wyoming() as (ws_port, wyoming_port):
        engines: dict[str, StreamingEngine] = {
            IN_PROCESS: local,
            "vLLM dialect": VllmRealtimeEngine(VllmRealtimeSettings(url=f"ws://127.0.0.1:{ws_port}")),
            "OpenAI dialect": OpenAIRealtimeEngine(OpenAISettings(url=f"ws://127.0.0.1:{ws_port}/v1")),
            "Wyoming": WyomingEngine(WyomingSettings(url=f"tcp://127.0.0.1:{wyoming_port}")),
        }
        for engine in engines.values():
            await engine.load()
        names = list(engines)
        for index, fixture in enumerate(fixtures):
            audio = utterance(fixture)
            for name in names[index % len(names) :] + names[: index % len(names)]:
                first, final = await _one_stream(engines[name], audio)
                latency = results.setdefault(name, DialectLatency())
                latency.first_text.append(first)
                latency.final.append(final)
    await local.aclose()
    return {name: results[name] for name in engines}


def print_dialects(results: dict[str, DialectLatency]) -> None:
    """The table: medians and p90 per dialect, and the medians' difference from in-process."""
    base = results[IN_PROCESS]
    base_first, base_final = percentile(base.first_text, 50) or 0.0, percentile(base.final, 50) or 0.0
    streams = len(base.final)
    print(f"\nLatency per dialect, built-in engine, {streams} command utterances at real-time pace (seconds):")
    print(f"  {'':16}{'first text med/p90':>20}{'added':>8}{'final med/p90':>18}{'added':>8}")
    for name, latency in results.items():
        first50, first90 = percentile(latency.first_text, 50) or 0.0, percentile(latency.first_text, 90) or 0.0
        final50, final90 = percentile(latency.final, 50) or 0.0, percentile(latency.final, 90) or 0.0
        print(
            f"  {name:16}{f'{first50:.2f} / {first90:.2f}':>20}{first50 - base_first:>+8.2f}"
            f"{f'{final50:.2f} / {final90:.2f}':>18}{final50 - base_final:>+8.2f}"
        )
