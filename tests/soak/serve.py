"""Soak of ``voxdesk serve``: a real server process, rolling sessions from Voxdesk's own client engines
(two at a time, each one phrase at real-time pace, the next as soon as it ends, the dialects in turn),
and the server's memory, descriptors and threads (``/proc``), its asyncio tasks (``/metrics``) and
each session's final latency sampled over wall-clock time.

:func:`soak_builtin` runs the built-in engine over all three dialects (vLLM ``/v1/realtime``,
OpenAI Realtime, Wyoming); :mod:`tests.soak.vllm` runs the same sessions on ``--engine vllm``.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from tests.serve_process import start_serve
from tests.soak.controller import load_phrases
from tests.soak.sampling import Bound, SoakResult, brief, process_resources
from tests.vllm_support import free_port, stop
from voxdesk.app.engines import build_engine
from voxdesk.app.files.transcription import transcribe_audio
from voxdesk.app.settings import EngineSettings
from voxdesk.engine.kinds import EngineKind
from voxdesk.engine.session import StreamingEngine

__all__ = ["BOUNDS", "Sessions", "soak_builtin", "soak_server"]

SAMPLE_EVERY = 5.0  # wall seconds between samples
CONCURRENT = 2  # sessions open at once: they share the engine's decode queue, within what 2 cores keep up with
SETTLE_TIMEOUT = 30.0  # for the server's gauges to fall back to zero once the clients stopped
WYOMING = r"Wyoming on tcp://[\d.]+:(\d+)"
BOUNDS = [
    Bound("rss_mib", "MiB", 16.0, 64.0, "12 KiB kept per session (1,400 an hour) passes it; floor: arenas"),
    Bound("fds", "fds", 0.0, 4.0, "only the open sessions' sockets come and go (2 at a time)"),
    Bound("threads", "threads", 0.0, 4.0, "pools are made at load; none may grow with sessions"),
    Bound("tasks", "tasks", 0.0, 6.0, "3 to 7 per open session (2 open at a time); a leak grows by session"),
    Bound("final_latency_s", "s", 0.5, 3.0, "0.4 s median on a free box; floor: a shared box's load (1-5 s seen)"),
]
GAUGES = ("voxdesk_realtime_sessions_active", "vllm:websocket_connections_active")


@dataclass
class Sessions:
    """What the clients saw: sessions per dialect, final latencies (in order), failures."""

    done: dict[str, int] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


def client_engines(port: int, wyoming_port: int | None) -> dict[str, StreamingEngine]:
    """Voxdesk's client engine for each dialect the server speaks, as the window would build it."""
    url = f"ws://127.0.0.1:{port}"
    choices = {
        "vllm": EngineSettings(EngineKind.REMOTE, server_url=url, server_dialect="vllm"),
        "openai": EngineSettings(EngineKind.REMOTE, server_url=url, server_dialect="openai"),
    }
    if wyoming_port is not None:
        choices["wyoming"] = EngineSettings(EngineKind.REMOTE, server_url=f"tcp://127.0.0.1:{wyoming_port}")
    return {dialect: build_engine(choice) for dialect, choice in choices.items()}


async def _worker(
    offset: int, engines: dict[str, StreamingEngine], phrases: list[np.ndarray], until: float, seen: Sessions
) -> None:
    """Sessions back to back until ``until``, each one phrase at real-time pace, taking the dialects
    in turn (starting ``offset`` along, so that concurrent workers overlap different dialects)."""
    dialects = list(engines)
    turn = offset
    while time.monotonic() < until:
        dialect, phrase = dialects[turn % len(dialects)], phrases[turn % len(phrases)]
        turn += 1
        try:
            report = await transcribe_audio(engines[dialect], phrase, realtime=True)
        except Exception as exc:
            seen.failures.append(f"{dialect}: {type(exc).__name__}: {exc}")
            continue
        if report.errors:
            seen.failures.append(f"{dialect}: {report.errors[0].code}: {report.errors[0].message}")
        finals = [u.final_latency for u in report.utterances if u.final_latency is not None]
        if finals:
            seen.latencies.append(finals[-1])
        seen.done[dialect] = seen.done.get(dialect, 0) + 1


async def warm_up(engine: StreamingEngine, phrases: list[np.ndarray]) -> None:
    """Every phrase once, as fast as the server takes it: the engine's memory grows until it has
    decoded each length once (about 60 MiB for the built-in one), then stays; only then is it sampled."""
    for phrase in phrases:
        await transcribe_audio(engine, phrase, realtime=False)


def metrics(port: int) -> dict[str, float]:
    """The server's unlabelled Prometheus samples."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
    return {m[1]: float(m[2]) for m in re.finditer(r"^([a-zA-Z_:][\w:]*) (\S+)$", text, re.M)}


async def soak_server(
    name: str,
    process: subprocess.Popen[bytes] | subprocess.Popen[str],
    engines: dict[str, StreamingEngine],
    port: int,
    minutes: float,
    on_sample: Callable[[str], None] = lambda line: None,
    concurrent: int = CONCURRENT,
    distinct: int | None = None,
) -> SoakResult:
    """Run ``concurrent`` workers against the server for ``minutes`` after a warm-up; sample the
    server; check that it settles and still serves. ``distinct`` phrases (all by default) are looped:
    a short run takes a few, so that its warm-up is short too."""
    result = SoakResult(name, "wall clock", BOUNDS)
    seen = Sessions()
    phrases = load_phrases()[:distinct]
    for engine in engines.values():
        await engine.load()
    await warm_up(next(iter(engines.values())), phrases)
    resting = (await asyncio.to_thread(metrics, port))["voxdesk_asyncio_tasks"]  # idle, between sessions
    start = time.monotonic()
    until = start + minutes * 60
    workers = [asyncio.create_task(_worker(i, engines, phrases, until, seen)) for i in range(concurrent)]
    latest = 0

    async def sample() -> dict[str, float]:
        nonlocal latest
        values = process_resources(process.pid)
        scraped = await asyncio.to_thread(metrics, port)
        values["tasks"] = scraped["voxdesk_asyncio_tasks"]
        recent, latest = seen.latencies[latest:], len(seen.latencies)
        if recent:
            values["final_latency_s"] = float(np.median(recent))
        result.add((time.monotonic() - start) / 3600, values)
        on_sample(f"{(time.monotonic() - start) / 60:6.1f} min: {seen.done} " + brief(values))
        return scraped

    try:
        while not all(w.done() for w in workers):
            await sample()
            await asyncio.wait(workers, timeout=SAMPLE_EVERY)
        for worker in workers:
            worker.result()
        settled = await _settled(port)
        await sample()
    finally:
        for worker in workers:
            worker.cancel()
        for engine in engines.values():
            await engine.aclose()
    sessions = sum(seen.done.values())
    result.check("sessions", sessions > 0 and all(seen.done.get(d) for d in engines), f"{seen.done}")
    result.check(
        "failures", not seen.failures, f"{len(seen.failures)}" + (f": {seen.failures[:3]}" if seen.failures else "")
    )
    result.check(
        "gauges at rest", all(settled[g] == 0 for g in GAUGES), ", ".join(f"{g}={settled[g]:g}" for g in GAUGES)
    )
    tasks = settled["voxdesk_asyncio_tasks"]
    result.check("tasks at rest", tasks <= resting, f"{tasks:g} after the sessions, {resting:g} before")
    result.check("still serving", process.poll() is None, "process alive" if process.poll() is None else "exited")
    return result


async def _settled(port: int) -> dict[str, float]:
    """The server's metrics once its session gauges are back to zero (or ``SETTLE_TIMEOUT`` passed)."""
    deadline = time.monotonic() + SETTLE_TIMEOUT
    while True:
        scraped = await asyncio.to_thread(metrics, port)
        if all(scraped[g] == 0 for g in GAUGES) or time.monotonic() > deadline:
            return scraped
        await asyncio.sleep(0.2)


async def soak_builtin(
    minutes: float,
    on_sample: Callable[[str], None] = lambda line: None,
    concurrent: int = CONCURRENT,
    distinct: int | None = None,
) -> SoakResult:
    """``voxdesk serve`` on the built-in engine, with Wyoming, under rolling sessions in all three dialects."""
    port = free_port()
    process, wyoming_port = start_serve(
        "--port", str(port), "--wyoming", "tcp://127.0.0.1:0", until=WYOMING, drain=True
    )
    try:
        engines = client_engines(port, wyoming_port)
        return await soak_server("serve", process, engines, port, minutes, on_sample, concurrent, distinct)
    finally:
        stop(process)  # type: ignore[arg-type]
