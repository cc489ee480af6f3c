"""Benchmark of ``voxdesk serve``: ``python -m benchmarks.realtime``.

Reports, from one run:

1. the latency the server adds to each delta, against the same engine called in-process;
   measured with the FAKE tick engine (one delta per 80 ms of audio, no recognition), whose
   deltas map to known audio positions, so only the server's cost differs;
2. the server process's CPU seconds per audio second for one real-time session, with the
   built-in engine and with the fake engine;
3. the largest number of concurrent real-time sessions the server holds, with the fake
   engine (a cheap engine: this measures the server) and with the built-in engine;
4. the latency per dialect (vLLM's ``/v1/realtime``, OpenAI Realtime, Wyoming) of one server
   with the built-in engine, side by side with the engine in-process (:mod:`benchmarks.dialects`).

The server runs as its own ``voxdesk serve`` process; the clients run in this process, on
the same two cores, and are part of the load.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import re
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import psutil
from websockets.asyncio.client import connect

from benchmarks.dialects import measure_dialects, print_dialects
from tests import speech_fixtures
from voxdesk.app.files.reading import read_audio
from voxdesk.app.files.transcription import percentile
from voxdesk.engine.clock import DeliveryClock
from voxdesk.engine.events import TextDelta
from voxdesk.engine.remote.realtime import encode_audio
from voxdesk.engine.session import SAMPLE_RATE
from voxdesk.engine.testing import TICK_SAMPLES, FakeTickEngine
from voxdesk.server.realtime.server import ServerConfig, running_server

CHUNK = 1600  # 100 ms per append, as vLLM's tests send
REPO = Path(__file__).resolve().parent.parent


@contextlib.contextmanager
def serve(engine: str) -> Iterator[tuple[int, psutil.Process]]:
    """A server process: ``voxdesk serve`` for the built-in engine, or the fake-engine server."""
    command = (
        ["-m", "voxdesk.cli.main", "serve", "--port", "0", "--max-sessions", "1000", "--idle-timeout", "120"]
        if engine == "builtin"
        else ["-m", "benchmarks.realtime", "--serve-fake"]
    )
    process = subprocess.Popen([sys.executable, *command], cwd=REPO, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    port = 0
    for line in process.stderr:
        if match := re.search(r"listening on ws://[\d.]+:(\d+)/", line):
            port = int(match.group(1))
            break
    try:
        yield port, psutil.Process(process.pid)
    finally:
        process.terminate()
        process.wait(timeout=30)


async def serve_fake_forever() -> None:
    """The realtime server over the fake tick engine, until the process is terminated."""
    config = ServerConfig(port=0, max_sessions=1000, idle_timeout=120)
    async with running_server(FakeTickEngine(), config) as server:
        print(f"listening on ws://127.0.0.1:{server.port}/v1/realtime", file=sys.stderr, flush=True)
        await asyncio.Event().wait()


@dataclass
class SessionResult:
    """One real-time session seen from the client."""

    delta_latencies: list[float]  # per delta: arrival minus when its audio was sent
    done_lag: float  # transcription.done after the final commit
    text: str


async def realtime_session(port: int, audio: np.ndarray, tick_deltas: bool) -> SessionResult:
    """Stream ``audio`` at real time over ``/v1/realtime`` and time what comes back."""
    clock = DeliveryClock()
    latencies: list[float] = []
    async with connect(f"ws://127.0.0.1:{port}/v1/realtime", max_size=2**24) as socket:
        await socket.recv()
        await socket.send(json.dumps({"type": "session.update", "model": ""}))
        await socket.send(json.dumps({"type": "input_audio_buffer.commit"}))

        async def send() -> float:
            start = time.perf_counter()
            for begin in range(0, len(audio), CHUNK):
                end = min(begin + CHUNK, len(audio))
                await asyncio.sleep(max(0.0, start + end / SAMPLE_RATE - time.perf_counter()))
                await socket.send(
                    json.dumps({"type": "input_audio_buffer.append", "audio": encode_audio(audio[begin:end])})
                )
                clock.record(end, time.perf_counter())
            await socket.send(json.dumps({"type": "input_audio_buffer.commit", "final": True}))
            return time.perf_counter()

        sender = asyncio.create_task(send())
        ticks = 0
        while True:
            event = json.loads(await socket.recv())
            if event["type"] == "transcription.delta" and tick_deltas:
                ticks += 1
                latencies.append(time.perf_counter() - clock.delivered_at(ticks * TICK_SAMPLES / SAMPLE_RATE))
            elif event["type"] == "transcription.done":
                return SessionResult(latencies, time.perf_counter() - await sender, event["text"])
            elif event["type"] == "error":
                raise RuntimeError(event)


async def in_process_tick_latencies(audio: np.ndarray) -> list[float]:
    """Per-delta latency of the fake engine called directly, fed at the same pace."""
    clock = DeliveryClock()

    async def paced() -> AsyncIterator[np.ndarray]:
        start = time.perf_counter()
        for begin in range(0, len(audio), CHUNK):
            end = min(begin + CHUNK, len(audio))
            await asyncio.sleep(max(0.0, start + end / SAMPLE_RATE - time.perf_counter()))
            clock.record(end, time.perf_counter())
            yield audio[begin:end]

    latencies = []
    async for event in FakeTickEngine().stream(paced()):
        if isinstance(event, TextDelta):
            latencies.append(time.perf_counter() - clock.delivered_at(event.audio_time))
    return latencies


async def cpu_per_audio_second(port: int, server: psutil.Process, audio: np.ndarray) -> float:
    before = server.cpu_times()
    await realtime_session(port, audio, tick_deltas=False)
    after = server.cpu_times()
    return float(after.user + after.system - before.user - before.system) / (len(audio) / SAMPLE_RATE)


async def holds(port: int, sessions: int, audio: np.ndarray, max_lag: float) -> tuple[bool, float]:
    """Whether ``sessions`` concurrent real-time sessions all finish within ``max_lag`` of their audio."""
    try:
        results = await asyncio.gather(*(realtime_session(port, audio, False) for _ in range(sessions)))
    except (RuntimeError, OSError) as failure:
        print(f"  {sessions} sessions: failed ({failure})", file=sys.stderr)
        return False, float("inf")
    worst = max(r.done_lag for r in results)
    print(f"  {sessions} sessions: worst done lag {worst:.2f} s", file=sys.stderr)
    return worst <= max_lag, worst


async def capacity(port: int, audio: np.ndarray, counts: list[int], max_lag: float) -> int:
    best = 0
    for count in counts:
        ok, _ = await holds(port, count, audio, max_lag)
        if not ok:
            break
        best = count
    return best


def fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 1000:.1f} ms"


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.realtime", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer and shorter sessions")
    parser.add_argument("--dialects-only", action="store_true", help="only the latency per dialect (part 4)")
    parser.add_argument("--serve-fake", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_fake:
        await serve_fake_forever()
    if args.dialects_only:
        print_dialects(await measure_dialects(args.quick))
        return 0
    fixtures = {f.name: f for f in speech_fixtures.build()}
    speech = read_audio(speech_fixtures.DEFAULT_DIR / fixtures["passage-slt"].path)[
        : 16_000 * (8 if args.quick else 20)
    ]
    tone = np.full(16_000 * (3 if args.quick else 5), 0.1, np.float32)

    direct = await in_process_tick_latencies(tone)
    with serve("fake-tick") as (port, server):
        over_wire = (await realtime_session(port, tone, tick_deltas=True)).delta_latencies
        fake_cpu = await cpu_per_audio_second(port, server, tone)
        fake_counts = [10, 25, 50, 100] if args.quick else [10, 25, 50, 100, 150, 200, 300, 400]
        fake_capacity = await capacity(port, tone, fake_counts, max_lag=0.5)
    with serve("builtin") as (port, server):
        builtin_cpu = await cpu_per_audio_second(port, server, speech)
        builtin_capacity = await capacity(port, speech, [1, 2, 3, 4, 6], max_lag=2.0)

    added = [w - d for w, d in zip(sorted(over_wire), sorted(direct), strict=False)]
    print("\nPer-delta latency, FAKE tick engine (no recognition), real-time feed, 100 ms appends:")
    print(f"  in-process   median {fmt(percentile(direct, 50))}, p99 {fmt(percentile(direct, 99))}")
    print(f"  via server   median {fmt(percentile(over_wire, 50))}, p99 {fmt(percentile(over_wire, 99))}")
    print(f"  added        median {fmt(percentile(added, 50))}, p99 {fmt(percentile(added, 99))}")
    print("Server CPU seconds per audio second, one real-time session:")
    print(f"  built-in engine {builtin_cpu:.3f}; fake tick engine {fake_cpu:.4f}")
    print("Concurrent real-time sessions held (every session's done within the lag bound of its audio):")
    print(f"  fake tick engine (cheap, measures the server): {fake_capacity} (bound 0.5 s, tried {fake_counts})")
    print(f"  built-in engine: {builtin_capacity} (bound 2.0 s, tried [1, 2, 3, 4, 6])")
    print_dialects(await measure_dialects(args.quick))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
