"""vLLM's engine core process killed (SIGKILL) under a real ``voxdesk serve --engine vllm`` with
a session open on each dialect: every session fails with its dialect's error, ``/health`` and
new sessions answer 503 naming what happened, and once the clients have left the server exits 1
with one line, so that an orchestrator starts a fresh one.

It kills its engine, so it starts its own (one start, about a minute here; more under load)."""

from __future__ import annotations

import asyncio
import base64
import json
import signal
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable
from typing import Any

import numpy as np
import psutil
import pytest
import soxr
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import InvalidStatus
from wyoming.asr import Transcribe
from wyoming.audio import AudioChunk, AudioStart
from wyoming.client import AsyncTcpClient

from tests.serve_process import start_serve
from tests.vllm_support import SERVED_NAME, SERVER_OPTIONS, build_tiny_model, chirp_pcm16, free_port, requires_vllm

pytestmark = [pytest.mark.vllm, requires_vllm]

Event = dict[str, Any]

WYOMING = r"Wyoming on tcp://[\d.]+:(\d+)"
STOPPED = "Transcription failed: the engine stopped; retry once the server is restarted"
PACE = 0.1  # real time: the sessions are mid-stream when the core dies
LIMIT = 60.0
CHIRP = chirp_pcm16(4.0)
OPENAI_RATE = 24_000
OPENAI_SESSION = {
    "type": "transcription",
    "audio": {"input": {"format": {"type": "audio/pcm", "rate": OPENAI_RATE}, "turn_detection": None}},
}


def get(port: int, path: str) -> tuple[int, str]:
    """``GET path``: its status and body."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as response:
            return int(response.status), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def sessions_active(port: int) -> float:
    _, body = get(port, "/metrics")
    [line] = [line for line in body.splitlines() if line.startswith("voxdesk_realtime_sessions_active ")]
    return float(line.split()[1])


async def eventually(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + LIMIT
    while not await asyncio.to_thread(check):
        assert time.monotonic() < deadline, f"never: {what}"
        await asyncio.sleep(0.2)


async def endless(send: Callable[[bytes], Awaitable[None]], rate: int = 16_000) -> None:
    """The chirp's PCM16 at ``rate`` in 0.1 s pieces at real time, over and over, until cancelled."""
    pcm = CHIRP if rate == 16_000 else np.round(soxr.resample(CHIRP.astype(np.float32), 16_000, rate)).astype("<i2")
    step = rate // 10
    while True:
        for start in range(0, len(pcm), step):
            await send(pcm[start : start + step].tobytes())
            await asyncio.sleep(PACE)


async def until_type(socket: ClientConnection, kind: str) -> list[Event]:
    events: list[Event] = []
    while not events or events[-1]["type"] != kind:
        events.append(json.loads(await asyncio.wait_for(socket.recv(), LIMIT)))
    return events


async def appends(socket: ClientConnection, pcm: bytes) -> None:
    await socket.send(json.dumps({"type": "input_audio_buffer.append", "audio": base64.b64encode(pcm).decode()}))


def engine_core(server: psutil.Process) -> psutil.Process:
    [core] = [child for child in server.children(recursive=True) if "EngineCore" in child.name()]
    return core


def test_a_killed_engine_core_fails_every_session_turns_health_503_and_serve_exits_1(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("VLLM_CPU_KVCACHE_SPACE", "1")
    port = free_port()
    model = ("--engine", "vllm", "--model", str(build_tiny_model()), "--served-model-name", SERVED_NAME)
    process, wyoming_port = start_serve(
        "--port", str(port), *model, *SERVER_OPTIONS, "--wyoming", "tcp://127.0.0.1:0",
        "--shutdown-grace", "120", until=WYOMING,
    )  # fmt: skip
    assert process.stderr is not None
    stderr, log = process.stderr, list[str]()

    def keep() -> None:  # vLLM logs a lot: a full pipe would block the server
        log.extend(line for line in stderr)

    threading.Thread(target=keep, daemon=True).start()
    server = psutil.Process(process.pid)
    family = server.children(recursive=True)

    async def scenario() -> dict[str, Any]:
        realtime = await connect(f"ws://127.0.0.1:{port}/v1/realtime")
        await realtime.recv()  # session.created
        await realtime.send(json.dumps({"type": "session.update", "model": SERVED_NAME}))
        await realtime.send(json.dumps({"type": "input_audio_buffer.commit"}))
        openai = await connect(f"ws://127.0.0.1:{port}/v1/realtime?intent=transcription")
        await openai.recv()  # session.created
        await openai.send(json.dumps({"type": "session.update", "session": OPENAI_SESSION}))
        assert (await until_type(openai, "session.updated"))[-1]["type"] == "session.updated"
        wyoming = AsyncTcpClient("127.0.0.1", wyoming_port, connect_timeout=2, read_timeout=LIMIT)
        await wyoming.connect()
        await wyoming.write_event(Transcribe(language="en").event())
        await wyoming.write_event(AudioStart(rate=16_000, width=2, channels=1).event())

        async def wyoming_chunk(pcm: bytes) -> None:
            await wyoming.write_event(AudioChunk(rate=16_000, width=2, channels=1, audio=pcm).event())

        senders = [
            asyncio.ensure_future(endless(lambda pcm: appends(realtime, pcm))),
            asyncio.ensure_future(endless(lambda pcm: appends(openai, pcm), OPENAI_RATE)),
            asyncio.ensure_future(endless(wyoming_chunk)),
        ]
        try:
            before = await until_type(realtime, "transcription.delta")  # its generation runs
            await eventually(lambda: sessions_active(port) == 2, "both WebSocket sessions running")
            wyoming_heard = []
            while (event := await wyoming.read_event()) is not None and event.type != "transcript-chunk":
                wyoming_heard.append(event.type)
            healthy = await asyncio.to_thread(get, port, "/health")

            engine_core(server).send_signal(signal.SIGKILL)  # mid-session on all three
            realtime_error = (await until_type(realtime, "error"))[-1]
            openai_error = (await until_type(openai, "error"))[-1]
            while (event := await wyoming.read_event()) is not None and event.type != "error":
                pass
            wyoming_error = None if event is None else event.data
        finally:
            for sender in senders:
                sender.cancel()
        await eventually(lambda: get(port, "/health")[0] == 503, "/health 503 once the engine is dead")
        health = await asyncio.to_thread(get, port, "/health")
        try:
            async with connect(f"ws://127.0.0.1:{port}/v1/realtime"):
                refused: int | None = None
        except InvalidStatus as refusal:
            refused = int(refusal.response.status_code)
        async with AsyncTcpClient("127.0.0.1", wyoming_port, connect_timeout=2, read_timeout=LIMIT) as late:
            late_event = await late.read_event()
        exited_early = process.poll()
        await realtime.close()
        await openai.close()
        await wyoming.disconnect()
        return {
            "before": before, "healthy": healthy, "realtime": realtime_error, "openai": openai_error,
            "wyoming": wyoming_error, "health": health, "refused": refused, "exited_early": exited_early,
            "late": None if late_event is None else late_event.data,
        }  # fmt: skip

    try:
        seen = asyncio.run(asyncio.wait_for(scenario(), 5 * LIMIT))
        status = process.wait(timeout=LIMIT)
    finally:
        if process.poll() is None:
            process.kill()
    # The core's worker notices its parent died, then vLLM's resource tracker sees them gone: slow under load.
    _, alive = psutil.wait_procs(family, timeout=2 * LIMIT)

    assert seen["healthy"] == (200, "")
    assert [e for e in seen["before"] if e["type"] == "transcription.delta"]
    assert seen["realtime"] == {"type": "error", "error": STOPPED, "code": "processing_error"}
    assert seen["openai"]["error"]["message"] == STOPPED and seen["openai"]["error"]["code"] == "processing_error"
    assert seen["wyoming"] == {"text": STOPPED, "code": "processing_error"}
    status_code, why = seen["health"]
    assert status_code == 503 and why.startswith("the engine stopped: vLLM's engine core process (EngineCore")
    assert "was killed by SIGKILL" in why
    assert seen["refused"] == 503
    assert seen["late"]["text"].startswith("the engine stopped: ") and seen["late"]["code"] == "server_busy"
    assert seen["exited_early"] is None  # the clients were let leave first

    assert status == 1
    text = "".join(log)
    assert text.count("engine stopped: vLLM's engine core process (EngineCore") >= 3, text[-4000:]
    # Its last word (after it, multiprocessing's resource tracker may still note the dead core's
    # shared memory it cleans up):
    [said] = [line for line in text.splitlines() if line.startswith("voxdesk: error: ")]
    assert said.startswith("voxdesk: error: vLLM's engine core process (EngineCore, pid "), said
    assert said.endswith("; exiting so that voxdesk serve is restarted") and "killed by SIGKILL" in said
    assert [(p.pid, p.name()) for p in alive] == [], "processes of the dead engine left running"
