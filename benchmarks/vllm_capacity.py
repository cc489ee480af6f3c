"""Capacity: ``voxdesk serve --engine vllm`` against vLLM's own ``/v1/realtime`` server.

``python -m benchmarks.vllm_capacity`` (in ``.venv-vllm``; ``benchmarks.vllm_engine`` runs it
too). Both servers run at once with the same model and engine settings. N paced sessions (each
streams ``--seconds`` of audio at real-time pace in 100 ms chunks, then commits ``final``) go
to one server, then the same N to the other; the servers take turns (the first one alternates)
for every N over several rounds, in one run. Per server and N it reports the final latency
(the final commit sent -> ``transcription.done`` received), median and p90 over all rounds'
sessions, and the CPU seconds of the serving process (the API process; vLLM's engine-core
child apart) per session-second of audio.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil
from websockets.asyncio.client import ClientConnection, connect

from tests.vllm_support import (
    SERVED_NAME,
    audio_frames,
    build_tiny_model,
    chirp_pcm16,
    start_vllm_server,
    start_voxdesk_vllm_server,
    stop,
)
from voxdesk.app.files.transcription import percentile

__all__ = ["CPU_COUNTS", "GPU_COUNTS", "Curve", "measure", "print_curve", "run_curve"]

CPU_COUNTS = (4, 8, 16, 24, 32)
GPU_COUNTS = (4, 8, 16, 24, 32, 64, 128, 256, 512)
CPU_OPTIONS = ("--dtype", "float32", "--enforce-eager", "--max-model-len", "1024")  # --max-num-seqs: vLLM's default
GPU_OPTIONS = ("--dtype", "bfloat16", "--max-model-len", "8192", "--max-num-seqs", "512",
               "--gpu-memory-utilization", "0.45")  # fmt: skip
CHUNK_SECONDS = 0.1
UPDATE = json.dumps({"type": "session.update", "model": SERVED_NAME})
COMMIT = json.dumps({"type": "input_audio_buffer.commit"})
FINAL = json.dumps({"type": "input_audio_buffer.commit", "final": True})
SERVERS = ("vllm", "voxdesk")


@dataclass
class Point:
    """One server at one N, over every round."""

    latencies: list[float] = field(default_factory=list)
    cpu_seconds: float = 0.0
    engine_cpu_seconds: float = 0.0
    session_seconds: float = 0.0


@dataclass
class Curve:
    """Results by server name, then N."""

    points: dict[str, dict[int, Point]]

    def largest_n_within(self, server: str, limit: float) -> int:
        """The largest N whose median final latency is at most ``limit`` (0 if none)."""
        held = [n for n, point in self.points[server].items() if _median(point.latencies) <= limit]
        return max(held, default=0)


def _median(values: list[float]) -> float:
    value = percentile(values, 50)
    return float("inf") if value is None else value


async def _session(port: int, frames: list[str], start: float) -> float:
    """One client at real-time pace from ``start`` (``perf_counter``); its final latency."""
    async with connect(f"ws://127.0.0.1:{port}/v1/realtime", max_size=2**24) as socket:
        await socket.recv()
        await socket.send(UPDATE)
        await socket.send(COMMIT)
        done = asyncio.create_task(_until_done(socket))
        for index, frame in enumerate(frames, start=1):
            await asyncio.sleep(max(0.0, start + index * CHUNK_SECONDS - time.perf_counter()))
            await socket.send(frame)
        final_sent = time.perf_counter()
        await socket.send(FINAL)
        return await done - final_sent


async def _until_done(socket: ClientConnection) -> float:
    while True:
        frame = await socket.recv()
        if '"transcription.done"' in frame:
            return time.perf_counter()
        if '"type":"error"' in frame:
            raise RuntimeError(f"server error: {frame!r}")


def _cpu(process: psutil.Process) -> tuple[float, float]:
    """CPU seconds of the process itself and of its children (vLLM's engine core)."""
    own = process.cpu_times()
    children = sum(sum(child.cpu_times()[:2]) for child in process.children(recursive=True))
    return own.user + own.system, children


async def _load(port: int, process: psutil.Process, frames: list[str], count: int, point: Point) -> None:
    """``count`` sessions at once, started evenly over one chunk period."""
    start = time.perf_counter() + 1.0 + count * 0.01  # room for the handshakes
    before = _cpu(process)
    sessions = (_session(port, frames, start + i * CHUNK_SECONDS / count) for i in range(count))
    point.latencies += await asyncio.gather(*sessions)
    after = _cpu(process)
    point.cpu_seconds += after[0] - before[0]
    point.engine_cpu_seconds += after[1] - before[1]
    point.session_seconds += count * len(frames) * CHUNK_SECONDS


async def run_curve(ports: dict[str, tuple[int, int]], counts: tuple[int, ...], rounds: int, seconds: float) -> Curve:
    """Every N on both servers (``ports``: name -> (port, pid)), alternating, ``rounds`` times."""
    frames = audio_frames(chirp_pcm16(seconds), int(CHUNK_SECONDS * 16_000))
    processes = {name: psutil.Process(pid) for name, (_, pid) in ports.items()}
    for name in SERVERS:  # warm-up, not counted
        await _load(ports[name][0], processes[name], frames, counts[0], Point())
    points = {name: {n: Point() for n in counts} for name in SERVERS}
    turn = 0
    for round_index in range(rounds):
        for count in counts:
            order = SERVERS if turn % 2 == 0 else SERVERS[::-1]
            turn += 1
            for name in order:
                await _load(ports[name][0], processes[name], frames, count, points[name][count])
                await asyncio.sleep(0.5)
            print(f"  round {round_index + 1}: N={count} done", file=sys.stderr)
    return Curve(points)


def print_curve(curve: Curve, rounds: int) -> None:
    """The table for benchmarks/README.md."""
    print(f"Capacity: paced sessions, final latency median / p90 over {rounds} alternated rounds; CPU-s of the")
    print("serving (API) process per session-second, its engine processes (core, worker) in brackets")
    print("| N | vLLM /v1/realtime | voxdesk serve --engine vllm | CPU vLLM API | CPU voxdesk | ratio |")
    print("|---|---|---|---|---|---|")
    for count, theirs in curve.points["vllm"].items():
        ours = curve.points["voxdesk"][count]
        cpu = [p.cpu_seconds / p.session_seconds for p in (theirs, ours)]
        engine = [p.engine_cpu_seconds / p.session_seconds for p in (theirs, ours)]
        print(f"| {count} | {_latency(theirs)} | {_latency(ours)} | {cpu[0]:.4f} ({engine[0]:.3f}) "
              f"| {cpu[1]:.4f} ({engine[1]:.3f}) | {cpu[1] / cpu[0]:.2f} |")  # fmt: skip
    theirs_n, ours_n = (curve.largest_n_within(name, 1.0) for name in SERVERS)
    print(f"Largest N with median final latency <= 1 s: vLLM {theirs_n}, Voxdesk {ours_n}")


def _latency(point: Point) -> str:
    median, p90 = percentile(point.latencies, 50), percentile(point.latencies, 90)
    return "n/a" if median is None or p90 is None else f"{median:.2f} / {p90:.2f} s"


async def measure(model: Path, gpu: bool, rounds: int, seconds: float) -> Curve:
    """Start both servers, run the curve, stop them."""
    options, kv_cache_gb = (GPU_OPTIONS, 0) if gpu else (CPU_OPTIONS, 2)
    started: list[tuple[subprocess.Popen[bytes], int]] = []
    try:  # a server that fails to start stops the one already up
        for starter in (start_vllm_server, start_voxdesk_vllm_server):
            started.append(starter(model, options, kv_cache_gb))
        ports = {name: (port, process.pid) for name, (process, port) in zip(SERVERS, started, strict=True)}
        return await run_curve(ports, GPU_COUNTS if gpu else CPU_COUNTS, rounds, seconds)
    finally:
        for process, _ in started:
            stop(process)


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.vllm_capacity", description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="a realtime model (default: the tiny CPU model, built here)")
    parser.add_argument("--gpu", action="store_true", help="GPU settings and N up to 512")
    parser.add_argument("--rounds", type=int, default=3, help="alternated rounds (default: %(default)s)")
    parser.add_argument("--seconds", type=float, default=4.0, help="audio per session (default: %(default)s)")
    args = parser.parse_args(argv)
    model = Path(args.model) if args.model else build_tiny_model()
    curve = await measure(model, args.gpu, args.rounds, args.seconds)
    print_curve(curve, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
