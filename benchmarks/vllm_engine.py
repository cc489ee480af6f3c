"""Benchmark of the vLLM engine: ``python -m benchmarks.vllm_engine`` (in ``.venv-vllm``).

On a CPU (default) it uses the tiny random-weight Voxtral Realtime model and reports, side by
side in one run:

- the per-chunk round trip (a 100 ms chunk in, the deltas it unlocks out), lock-step, of
  Voxdesk's in-process engine and of vLLM's own ``/v1/realtime`` server;
- the largest number of concurrent sessions kept at real time in-process;
- the capacity curve of :mod:`benchmarks.vllm_capacity`: ``voxdesk serve --engine vllm``
  against vLLM's server, N = 4 to 32 paced sessions, alternated rounds.

On an NVIDIA GPU with vllm and the real weights, run
``python -m benchmarks.vllm_engine --model mistralai/Voxtral-Mini-4B-Realtime-2602 --gpu``
for first-delta latency, per-step latency, real-time factor, sessions held at real time and
the capacity curve up to N = 512 (vLLM's server lock-step comparison is skipped there unless
``--with-server``).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np
from websockets.asyncio.client import connect

from benchmarks.vllm_capacity import measure as measure_capacity
from benchmarks.vllm_capacity import print_curve
from tests.vllm_support import (
    ENGINE_OPTIONS,
    SERVED_NAME,
    as_float,
    audio_frames,
    build_tiny_model,
    chirp_pcm16,
    start_vllm_server,
    stop,
)
from voxdesk.app.files.transcription import percentile
from voxdesk.engine.events import TextDelta, UtteranceDone
from voxdesk.engine.vllm.engine import VllmEngine, VllmSettings

CHUNK = 1600
LEFT_PAD, FIRST_OUTPUT, SLOT = 40960, 49960, 1280  # Voxtral's streaming buffer (scripts/make_tiny_voxtral.py)


def outputs_unlocked(samples_sent: int) -> int:
    """Outputs Voxtral's buffer can produce once ``samples_sent`` samples of audio are in."""
    buffered = LEFT_PAD + samples_sent
    return 0 if buffered < FIRST_OUTPUT else (buffered - FIRST_OUTPUT) // SLOT + 1


async def in_process_round_trips(engine: VllmEngine, pcm: np.ndarray) -> list[float]:
    """Lock-step: send a chunk, wait for every output it unlocks, time it."""
    received = 0
    arrived = asyncio.Event()
    sent_at: list[float] = []
    trips: list[float] = []

    async def chunks() -> AsyncIterator[np.ndarray]:
        audio = as_float(pcm)
        for end in range(CHUNK, len(audio) + 1, CHUNK):
            sent_at.append(time.perf_counter())
            yield audio[end - CHUNK : end]
            while received < outputs_unlocked(end):
                arrived.clear()
                await arrived.wait()
            if outputs_unlocked(end) > outputs_unlocked(end - CHUNK):
                trips.append(time.perf_counter() - sent_at[-1])

    async for event in engine.stream(chunks()):
        if isinstance(event, TextDelta):
            received += 1
            arrived.set()
    return trips


async def server_round_trips(port: int, pcm: np.ndarray) -> list[float]:
    """The same lock-step over vLLM's own ``/v1/realtime``."""
    trips: list[float] = []
    async with connect(f"ws://127.0.0.1:{port}/v1/realtime") as socket:
        await socket.recv()
        await socket.send(json.dumps({"type": "session.update", "model": SERVED_NAME}))
        await socket.send(json.dumps({"type": "input_audio_buffer.commit"}))
        received = 0
        for index, frame in enumerate(audio_frames(pcm, CHUNK), start=1):
            started = time.perf_counter()
            await socket.send(frame)
            target = outputs_unlocked(index * CHUNK)
            while received < target:
                if json.loads(await socket.recv())["type"] == "transcription.delta":
                    received += 1
            if target > outputs_unlocked((index - 1) * CHUNK):
                trips.append(time.perf_counter() - started)
        await socket.send(json.dumps({"type": "input_audio_buffer.commit", "final": True}))
        while json.loads(await socket.recv())["type"] != "transcription.done":
            pass
    return trips


async def realtime_session(engine: VllmEngine, pcm: np.ndarray) -> tuple[float | None, float, list[float]]:
    """One session at real-time pace: first-delta latency, lag of done after the audio, step gaps."""
    audio = as_float(pcm)
    start = time.perf_counter()

    async def paced() -> AsyncIterator[np.ndarray]:
        for end in range(CHUNK, len(audio) + 1, CHUNK):
            await asyncio.sleep(max(0.0, start + end / 16_000 - time.perf_counter()))
            yield audio[end - CHUNK : end]

    first: float | None = None
    lag = float("inf")
    stamps: list[float] = []
    async for event in engine.stream(paced()):
        now = time.perf_counter()
        if isinstance(event, TextDelta):
            stamps.append(now)
            if first is None and event.text:
                first = now - start - 0.48  # text is due 480 ms after the audio it transcribes
        elif isinstance(event, UtteranceDone):
            lag = now - (start + len(audio) / 16_000)
    gaps = [b - a for a, b in itertools.pairwise(stamps)]
    return first, lag, gaps


async def free_running_rtf(engine: VllmEngine, pcm: np.ndarray) -> float:
    """Processing time per second of audio when the audio is fed as fast as it is taken."""
    audio = as_float(pcm)

    async def chunks() -> AsyncIterator[np.ndarray]:
        for end in range(CHUNK, len(audio) + 1, CHUNK):
            yield audio[end - CHUNK : end]

    began = time.perf_counter()
    async for _ in engine.stream(chunks()):
        pass
    return (time.perf_counter() - began) / (len(audio) / 16_000)


async def sessions_held(engine: VllmEngine, pcm: np.ndarray, counts: list[int], max_lag: float) -> int:
    best = 0
    for count in counts:
        results = await asyncio.gather(*(realtime_session(engine, pcm) for _ in range(count)))
        worst = max(lag for _, lag, _ in results)
        print(f"  {count} sessions at real time: worst done lag {worst:.2f} s", file=sys.stderr)
        if worst > max_lag:
            break
        best = count
    return best


async def lock_step(
    engine: VllmEngine, model: Path, pcm: np.ndarray, with_server: bool, rounds: int = 3
) -> tuple[list[float], list[float]]:
    """Lock-step round trips in-process and through vLLM's server, alternated over rounds."""
    await in_process_round_trips(engine, pcm)  # warm-up
    if not with_server:
        return await in_process_round_trips(engine, pcm), []
    local: list[float] = []
    server: list[float] = []
    process, port = start_vllm_server(model)
    try:
        await server_round_trips(port, pcm)  # warm-up
        for round_index in range(rounds):
            first_local = round_index % 2 == 0
            if first_local:
                local += await in_process_round_trips(engine, pcm)
            server += await server_round_trips(port, pcm)
            if not first_local:
                local += await in_process_round_trips(engine, pcm)
    finally:
        stop(process)
    return local, server


def _ratio(ours: list[float], theirs: list[float], q: float) -> str:
    a, b = percentile(ours, q), percentile(theirs, q)
    return "n/a" if a is None or not b else f"{a / b:.2f}"


def ms(values: list[float], q: float) -> str:
    value = percentile(values, q)
    return "n/a" if value is None else f"{value * 1000:.1f} ms"


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.vllm_engine", description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="a realtime model (default: the tiny CPU model, built here)")
    parser.add_argument("--gpu", action="store_true", help="GPU settings: bf16, CUDA graphs, more sessions")
    parser.add_argument("--with-server", action="store_true", help="also time vLLM's own server (on by default on CPU)")
    parser.add_argument("--seconds", type=float, default=8.0, help="audio per session")
    args = parser.parse_args(argv)
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")
    model = args.model or str(build_tiny_model())
    options: dict[str, Any] = (
        {"dtype": "bfloat16", "max_model_len": 8192, "max_num_seqs": 64, "gpu_memory_utilization": 0.9}
        if args.gpu
        else {**ENGINE_OPTIONS, "max_num_seqs": 32}
    )
    pcm = chirp_pcm16(args.seconds)
    engine = VllmEngine(VllmSettings(model=model, served_model_name=SERVED_NAME, **options))
    began = time.perf_counter()
    await engine.load()
    print(f"engine start {time.perf_counter() - began:.1f} s ({model})")
    local, server = await lock_step(engine, Path(model), pcm, with_server=args.with_server or not args.gpu)
    rtf = await free_running_rtf(engine, pcm)
    first, lag, gaps = await realtime_session(engine, pcm)
    counts = [1, 2, 4, 8, 16, 32, 64] if args.gpu else [1, 2, 4, 8, 16, 32]
    held = await sessions_held(engine, pcm, counts, max_lag=1.0)
    await engine.aclose()
    print("Per-chunk round trip (100 ms chunk in -> its deltas out), lock-step, same audio:")
    print(f"  in-process engine        median {ms(local, 50)}, p90 {ms(local, 90)}, p99 {ms(local, 99)}")
    if server:
        print(f"  vLLM's /v1/realtime      median {ms(server, 50)}, p90 {ms(server, 90)}, p99 {ms(server, 99)}")
        print(f"  in-process / vLLM's server: median {_ratio(local, server, 50)}, p90 {_ratio(local, server, 90)}")
    print(f"Real-time factor, one session fed as fast as possible: {rtf:.3f}")
    print("One session at real time:")
    first_text = "n/a" if first is None else f"{first * 1000:.0f} ms"
    print(f"  first non-empty delta {first_text} after its audio plus the 480 ms delay")
    print(f"  per-step gap median {ms(gaps, 50)}, p99 {ms(gaps, 99)}; done {lag * 1000:.0f} ms after the audio ended")
    print(f"Sessions kept at real time (done within 1 s of the audio's end), in-process: {held} (tried {counts})")
    rounds = 3
    print_curve(await measure_capacity(Path(model), args.gpu, rounds, seconds=4.0), rounds)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
