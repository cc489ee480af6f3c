"""Voxdesk against WhisperLive, same model, same audio, same run: ``python -m benchmarks.whisperlive``.

Both servers run as their own processes with the same bundled Whisper tiny.en (CTranslate2,
int8 on the CPU): ``voxdesk serve`` (built-in engine, vLLM dialect) and WhisperLive 0.10.0's
server (faster-whisper backend, its client's default options: server VAD on, 10 repeats
before a segment is completed), from ``.venv-whisperlive`` (``scripts/setup-whisperlive.sh``).
The clients run in this process on the same two cores and stream each fixture at real-time
pace in 100 ms chunks, followed by silence until 8 s after its end of speech. Measured:

- first text: the first text shown, after the audio at the true speech onset was sent;
- final: the last text that will not change any more (Voxdesk: a ``transcription.delta``,
  committed text; WhisperLive: a segment marked ``completed``), after the audio at the true
  end of speech was sent;
- settled: the last change of the shown text (provisional included), after the end of speech;
- WER of the final text; the server process's CPU seconds per audio second;
- concurrent sessions held: N dictation passages at once, every one's final within 1.5 s of
  its end of speech.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from socket import create_server

import numpy as np
import psutil
from websockets.asyncio.client import ClientConnection, connect

from benchmarks.realtime import REPO, serve
from tests import speech_fixtures
from tests.recognition import wer
from tests.speech_fixtures import Fixture
from voxdesk.app.files.pacing import paced_chunks
from voxdesk.app.files.reading import read_audio
from voxdesk.app.files.transcription import percentile
from voxdesk.engine.clock import DeliveryClock
from voxdesk.engine.remote.realtime import encode_audio
from voxdesk.engine.session import SAMPLE_RATE
from voxdesk.engine.whisper.models import model_directory

TAIL_SECONDS = 8.0  # WhisperLive completes a segment after 10 equal decodes: about 6 s here
HELD_LAG = 1.5
WHISPERLIVE_PYTHON = REPO / ".venv-whisperlive" / "bin" / "python"


@dataclass
class Timeline:
    """What one streamed session showed, on the wall clock."""

    onset_sent: float = 0.0
    end_sent: float = 0.0
    first_text: float | None = None
    final: float | None = None
    settled: float | None = None
    text: str = ""

    @property
    def final_lag(self) -> float | None:
        """The final's time after the end of speech; ``None`` when it never came. A last
        completion before the end of speech was sent left the last words out of the final
        text (WhisperLive drops words at times), so for them the final never came either."""
        if self.final is None or self.final < self.end_sent:
            return None
        return self.final - self.end_sent

    def shown(self, now: float, text: str, final: bool) -> None:
        """Record the shown text at ``now``; ``final`` when it includes newly final text."""
        if text.strip() and self.first_text is None:
            self.first_text = now
        if final:
            self.final = now
        if text != self.text:
            self.settled = now
            self.text = text


@dataclass
class Result:
    """One fixture through one server."""

    fixture: str
    first_text_s: float | None
    final_s: float | None
    settled_s: float | None
    reference: str
    text: str
    cpu_per_audio_s: float


Sender = Callable[[np.ndarray], Awaitable[None]]
Segments = dict[float, tuple[str, bool]]  # WhisperLive's segments by start: text, completed


async def paced(audio: np.ndarray, fixture: Fixture, timeline: Timeline, send: Sender) -> None:
    """Send ``audio`` at real-time pace in 100 ms chunks, noting when its speech onset and end went out."""
    clock = DeliveryClock()
    async for chunk in paced_chunks(audio, clock):
        await send(chunk)
    timeline.onset_sent = clock.delivered_at(fixture.speech[0][0])
    timeline.end_sent = clock.delivered_at(fixture.speech[-1][1])


def with_tail(fixture: Fixture) -> np.ndarray:
    """The fixture's audio followed by silence until ``TAIL_SECONDS`` after its speech ends."""
    audio = read_audio(speech_fixtures.DEFAULT_DIR / fixture.path)
    total = int((fixture.speech[-1][1] + TAIL_SECONDS) * SAMPLE_RATE)
    return np.concatenate([audio, np.zeros(max(0, total - len(audio)), np.float32)])


async def voxdesk_session(port: int, fixture: Fixture) -> Timeline:
    """One session over ``voxdesk serve``'s ``/v1/realtime`` (vLLM dialect)."""
    timeline = Timeline()
    committed = ""
    async with connect(f"ws://127.0.0.1:{port}/v1/realtime", max_size=2**24) as socket:
        await socket.recv()
        await socket.send(json.dumps({"type": "session.update", "model": "", "provisional": True}))
        await socket.send(json.dumps({"type": "input_audio_buffer.commit"}))

        async def send(chunk: np.ndarray) -> None:
            await socket.send(json.dumps({"type": "input_audio_buffer.append", "audio": encode_audio(chunk)}))

        async def stream() -> None:
            await paced(with_tail(fixture), fixture, timeline, send)
            await socket.send(json.dumps({"type": "input_audio_buffer.commit", "final": True}))

        sender = asyncio.create_task(stream())
        while True:
            event = json.loads(await socket.recv())
            now = time.perf_counter()
            if event["type"] == "transcription.delta" and event["delta"]:
                committed += event["delta"]
                timeline.shown(now, committed, final=True)
            elif event["type"] == "transcription.provisional":
                timeline.shown(now, committed + event["text"], final=False)
            elif event["type"] == "transcription.done":
                await sender
                timeline.text = committed
                return timeline
            elif event["type"] == "error":
                raise RuntimeError(event)


def whisperlive_text(segments: Segments) -> tuple[str, int]:
    """The shown text of WhisperLive's segments by start time, and how many are completed."""
    ordered = [segments[start] for start in sorted(segments)]
    return " ".join(text.strip() for text, _ in ordered), sum(done for _, done in ordered)


async def whisperlive_session(port: int, fixture: Fixture) -> Timeline:
    """One session over WhisperLive's WebSocket protocol, with its client's default options."""
    timeline = Timeline()
    segments: Segments = {}
    options = {
        "uid": str(uuid.uuid4()),
        "language": "en",
        "task": "transcribe",
        "model": "tiny.en",
        "use_vad": True,
        "send_last_n_segments": 10,
        "no_speech_thresh": 0.45,
        "clip_audio": False,
        "same_output_threshold": 10,
    }
    async with connect(f"ws://127.0.0.1:{port}", max_size=2**24) as socket:
        await socket.send(json.dumps(options))
        while json.loads(await socket.recv()).get("message") != "SERVER_READY":
            pass

        async def send(chunk: np.ndarray) -> None:
            await socket.send(chunk.astype(np.float32).tobytes())

        sender = asyncio.create_task(paced(with_tail(fixture), fixture, timeline, send))
        receiver = asyncio.create_task(receive_segments(socket, segments, timeline))
        await sender
        await socket.send(b"END_OF_AUDIO")
        receiver.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await receiver
    timeline.text = whisperlive_text(segments)[0]
    if any(text.strip() and not done for text, done in segments.values()):
        timeline.final = None  # words shown but never completed: the final never came
    return timeline


async def receive_segments(socket: ClientConnection, segments: Segments, timeline: Timeline) -> None:
    """Merge WhisperLive's last-N segment lists into ``segments`` and note the shown text."""
    async for message in socket:
        update = json.loads(message).get("segments")
        if not update:
            continue
        now = time.perf_counter()
        first = min(float(s["start"]) for s in update)
        for start in [s for s, (_, done) in segments.items() if not done and s >= first]:
            del segments[start]
        _, completed_before = whisperlive_text(segments)
        for segment in update:
            segments[float(segment["start"])] = (segment["text"], bool(segment.get("completed")))
        text, completed = whisperlive_text(segments)
        timeline.shown(now, text, final=completed > completed_before)


@contextlib.contextmanager
def whisperlive_server() -> Iterator[tuple[int, psutil.Process]]:
    """WhisperLive's server as its own process, on a free port."""
    if not WHISPERLIVE_PYTHON.exists():
        raise SystemExit("WhisperLive is not installed: run scripts/setup-whisperlive.sh")
    script = REPO / "benchmarks" / "whisperlive_server.py"
    command = [str(WHISPERLIVE_PYTHON), str(script), str(free_port()), str(model_directory())]
    env = {**os.environ, "HOME": str(REPO / "build" / "whisperlive-home")}
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env)
    assert process.stderr is not None
    port = 0
    for line in process.stderr:
        if match := re.search(r"server listening on [\d.]+:(\d+)", line):
            port = int(match.group(1))
            break
    if not port:
        raise SystemExit(f"WhisperLive's server did not start (exit {process.wait()})")
    # It logs every segment at INFO: keep reading, or a full pipe stalls its threads.
    threading.Thread(target=process.stderr.read, daemon=True).start()
    try:
        yield port, psutil.Process(process.pid)
    finally:
        process.terminate()
        process.wait(timeout=30)


def free_port() -> int:
    with create_server(("127.0.0.1", 0)) as probe:
        return int(probe.getsockname()[1])


Session = Callable[[int, Fixture], Awaitable[Timeline]]


async def measure(session: Session, port: int, server: psutil.Process, fixture: Fixture) -> Result:
    """One fixture, alone on the server."""
    before = server.cpu_times()
    timeline = await session(port, fixture)
    after = server.cpu_times()
    cpu = after.user + after.system - before.user - before.system
    return Result(
        fixture=fixture.name,
        first_text_s=None if timeline.first_text is None else timeline.first_text - timeline.onset_sent,
        final_s=timeline.final_lag,
        settled_s=None if timeline.settled is None else timeline.settled - timeline.end_sent,
        reference=fixture.text,
        text=timeline.text,
        cpu_per_audio_s=cpu / (fixture.speech[-1][1] + TAIL_SECONDS),
    )


async def held(session: Session, port: int, fixture: Fixture, counts: list[int]) -> tuple[int, dict[int, float]]:
    """The largest N of ``counts`` whose sessions all give their final within ``HELD_LAG``."""
    best, worst_by_count = 0, {}
    for count in counts:
        try:
            timelines = await asyncio.gather(*(session(port, fixture) for _ in range(count)))
        except (RuntimeError, OSError) as failure:
            print(f"  {count} sessions: failed ({failure})", file=sys.stderr)
            break
        lags = [float("inf") if t.final_lag is None else t.final_lag for t in timelines]
        worst_by_count[count] = max(lags)
        print(f"  {count} sessions: worst final {max(lags):.2f} s after end of speech", file=sys.stderr)
        if max(lags) > HELD_LAG:
            break
        best = count
    return best, worst_by_count


def median(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return percentile(present, 50) if present else None


def seconds(value: float | None) -> str:
    return "none" if value is None else f"{value:.2f} s"


def final_wer(results: list[Result]) -> float:
    """Word error rate of the sessions' final texts."""
    return wer([r.reference for r in results], [r.text for r in results])


def summary(name: str, results: list[Result]) -> str:
    missing = sum(r.final_s is None for r in results)
    return (
        f"| {name} | {seconds(median([r.first_text_s for r in results]))} "
        f"| {seconds(median([r.final_s for r in results]))}{f' ({missing} never)' if missing else ''} "
        f"| {seconds(median([r.settled_s for r in results]))} "
        f"| {final_wer(results):.3f} "
        f"| {np.mean([r.cpu_per_audio_s for r in results]):.2f} |"
    )


@dataclass
class ServerRun:
    """Everything measured on one server."""

    commands: list[Result]
    passages: list[Result]
    held: int
    worst_final_by_sessions: dict[int, float]


async def run_server(session: Session, port: int, server: psutil.Process, args: argparse.Namespace) -> ServerRun:
    fixtures = speech_fixtures.build()
    commands = [f for f in fixtures if f.kind == "command" and f.voice == args.voice][: args.commands]
    passages = [f for f in fixtures if f.kind == "passage"]
    await measure(session, port, server, commands[0])  # warm-up: model load, first decode
    command_results = [await measure(session, port, server, f) for f in commands]
    passage_results = [await measure(session, port, server, f) for f in passages]
    capacity, worst = await held(session, port, passages[0], args.sessions)
    return ServerRun(command_results, passage_results, capacity, worst)


async def both_servers(args: argparse.Namespace) -> tuple[ServerRun, ServerRun]:
    """The same sessions against ``voxdesk serve``, then WhisperLive's server."""
    with serve("builtin") as (port, server):
        voxdesk = await run_server(voxdesk_session, port, server, args)
    with whisperlive_server() as (port, server):
        whisperlive = await run_server(whisperlive_session, port, server, args)
    return voxdesk, whisperlive


def print_comparison(voxdesk: ServerRun, whisperlive: ServerRun, voice: str) -> None:
    """Both servers side by side, as Markdown, then the concurrent sessions each held."""
    print("\n| server | first text | final after end of speech | settled | WER | CPU-s per audio-s |")
    print("|---|---|---|---|---|---|")
    for label, runs in (("Voxdesk", voxdesk), ("WhisperLive", whisperlive)):
        print(summary(f"{label}, commands ({voice})", runs.commands))
        print(summary(f"{label}, passages", runs.passages))
    print(f"\nConcurrent passages held (every final within {HELD_LAG} s of the end of speech):")
    for label, runs in (("Voxdesk", voxdesk), ("WhisperLive", whisperlive)):
        tried = ", ".join(f"{n}: {lag:.2f} s" for n, lag in runs.worst_final_by_sessions.items())
        print(f"  {label}: {runs.held} (worst final per N: {tried})")


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.whisperlive", description=__doc__.splitlines()[0])
    parser.add_argument("--voice", default="slt", choices=["slt", "espeak"], help="voice of the command fixtures")
    parser.add_argument("--commands", type=int, default=14, help="how many command fixtures")
    parser.add_argument("--sessions", type=int, nargs="+", default=[1, 2, 4, 6, 8], help="N concurrent passages to try")
    parser.add_argument("--json", type=Path, help="also write the raw results here")
    args = parser.parse_args(argv)
    voxdesk, whisperlive = await both_servers(args)
    print_comparison(voxdesk, whisperlive, args.voice)
    if args.json:
        raw = {"voxdesk": asdict(voxdesk), "whisperlive": asdict(whisperlive)}
        args.json.write_text(json.dumps(raw, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
