"""A decode that raises mid-utterance in a real ``voxdesk serve`` process (built-in engine): on
each dialect the session it belongs to fails with that dialect's error after the text heard
before it, ``/health`` stays 200, and the same process transcribes the next session."""

from __future__ import annotations

import asyncio
import base64
import json
import signal
from typing import Any

import numpy as np
import pytest
import soxr
from websockets.asyncio.client import ClientConnection, connect
from wyoming.asr import Transcribe
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.event import Event as WyomingEvent

from tests.cli.test_serve_health import health
from tests.recognition import assert_recognized
from tests.serve_process import start_serve
from tests.speech_fixtures import Fixture
from tests.vllm_support import free_port
from voxdesk.engine.remote.realtime import encode_audio
from voxdesk.engine.session import SAMPLE_RATE

pytestmark = pytest.mark.integration  # runs voxdesk serve as a process

Event = dict[str, Any]

FIRST, SECOND = "command00-slt", "command13-slt"
CHUNK = 1600  # 0.1 s
PACE = 0.05  # seconds between chunks: twice real time, so the second utterance gets partials while it is sent
LIMIT = 60.0
OPENAI_RATE = 24_000
OPENAI_VAD_SESSION = {
    "type": "transcription",
    "audio": {
        "input": {
            "format": {"type": "audio/pcm", "rate": OPENAI_RATE},
            "transcription": {"model": "gpt-4o-transcribe", "language": "en"},
            "turn_detection": {"type": "server_vad", "silence_duration_ms": 500},
        }
    },
}
WYOMING = r"Wyoming on tcp://[\d.]+:(\d+)"


def chunks(audio: np.ndarray) -> list[np.ndarray]:
    return [audio[start : start + CHUNK] for start in range(0, len(audio), CHUNK)]


async def realtime_events(port: int, audio: np.ndarray, last: str) -> list[Event]:
    """A vLLM-dialect generation of ``audio`` sent at :data:`PACE`; its events up to the first of type ``last``."""
    async with connect(f"ws://127.0.0.1:{port}/v1/realtime") as socket:
        await socket.recv()  # session.created
        await socket.send(json.dumps({"type": "session.update", "model": "voxdesk-builtin"}))
        await socket.send(json.dumps({"type": "input_audio_buffer.commit"}))

        async def send() -> None:
            for chunk in chunks(audio):
                await socket.send(json.dumps({"type": "input_audio_buffer.append", "audio": encode_audio(chunk)}))
                await asyncio.sleep(PACE)
            await socket.send(json.dumps({"type": "input_audio_buffer.commit", "final": True}))

        return await _until(socket, send(), last)


async def openai_events(port: int, audio: np.ndarray) -> list[Event]:
    """An OpenAI transcription session with server VAD (a turn each utterance); its events up to
    the first failed turn or error."""
    async with connect(f"ws://127.0.0.1:{port}/v1/realtime?intent=transcription") as socket:
        await socket.recv()  # session.created
        await socket.send(json.dumps({"type": "session.update", "session": OPENAI_VAD_SESSION}))
        pcm = (np.clip(soxr.resample(audio, SAMPLE_RATE, OPENAI_RATE), -1, 1) * 32767).astype("<i2").tobytes()
        step = OPENAI_RATE // 10 * 2

        async def send() -> None:
            for start in range(0, len(pcm), step):
                appended = base64.b64encode(pcm[start : start + step]).decode()
                await socket.send(json.dumps({"type": "input_audio_buffer.append", "audio": appended}))
                await asyncio.sleep(PACE)

        return await _until(socket, send(), "conversation.item.input_audio_transcription.failed", "error")


async def _until(socket: ClientConnection, sending: Any, *last: str) -> list[Event]:
    sender = asyncio.ensure_future(sending)
    events: list[Event] = []
    try:
        while not events or events[-1]["type"] not in last:
            events.append(json.loads(await socket.recv()))
    finally:
        sender.cancel()
    return events


async def wyoming_events(port: int, audio: np.ndarray) -> list[WyomingEvent]:
    """One Wyoming request of ``audio`` at :data:`PACE`, then ``audio-stop``; every event up to ``transcript``."""
    async with AsyncTcpClient("127.0.0.1", port, connect_timeout=2, read_timeout=LIMIT) as client:
        await client.write_event(Transcribe(language="en").event())
        await client.write_event(AudioStart(rate=SAMPLE_RATE, width=2, channels=1).event())
        events: list[WyomingEvent] = []

        async def read() -> None:
            while (event := await client.read_event()) is not None:
                events.append(event)
                if event.type == "transcript":
                    return

        reader = asyncio.ensure_future(read())
        for chunk in chunks(audio):
            pcm = (np.clip(chunk, -1, 1) * 32767).astype("<i2").tobytes()
            await client.write_event(AudioChunk(rate=SAMPLE_RATE, width=2, channels=1, audio=pcm).event())
            await asyncio.sleep(PACE)
        await client.write_event(AudioStop().event())
        await reader
        return events


def test_a_failed_decode_fails_its_session_on_each_dialect_and_the_server_goes_on(
    speech: dict[str, Fixture], fixture_audio: dict[str, np.ndarray]
) -> None:
    pause = np.zeros(SAMPLE_RATE, np.float32)
    two_utterances = np.concatenate([fixture_audio[FIRST], pause, fixture_audio[SECOND], pause])
    port = free_port()
    process, wyoming_port = start_serve(
        "--port", str(port), "--wyoming", "tcp://127.0.0.1:0", module="tests.server.failing_serve", until=WYOMING
    )

    async def scenario() -> tuple[list[Event], list[Event], list[WyomingEvent], list[int], list[Event]]:
        # One after another: the decoder fails the first partial after each final (tests/engine/failing_decoder.py).
        realtime = await realtime_events(port, two_utterances, "error")
        openai = await openai_events(port, two_utterances)
        wyoming = await wyoming_events(wyoming_port, two_utterances)
        statuses = [await asyncio.to_thread(health, port)]
        after = await realtime_events(port, fixture_audio[SECOND], "transcription.done")
        statuses.append(await asyncio.to_thread(health, port))
        return realtime, openai, wyoming, statuses, after

    try:
        realtime, openai, wyoming, statuses, after = asyncio.run(asyncio.wait_for(scenario(), 4 * LIMIT))
        process.send_signal(signal.SIGTERM)
        _, log = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == 0

    assert realtime[-1] == {
        "type": "error",
        "error": "Transcription failed; start a new commit",
        "code": "processing_error",
    }
    heard = "".join(e["delta"] for e in realtime if e["type"] == "transcription.delta")
    assert_recognized(speech[FIRST], heard)  # the text before the failure reached the client

    completed = [e for e in openai if e["type"] == "conversation.item.input_audio_transcription.completed"]
    assert [e["type"] for e in openai].count("conversation.item.input_audio_transcription.completed") == 1
    assert_recognized(speech[FIRST], completed[0]["transcript"])
    failed = openai[-1]  # an error event, or the failed item's if its speech had stopped
    assert failed["error"]["message"] == "Transcription failed; start a new commit", failed
    assert failed["type"] == "conversation.item.input_audio_transcription.failed" or (
        failed["type"] == "error" and failed["error"]["code"] == "processing_error"
    ), failed

    types = [e.type for e in wyoming]
    assert "error" in types and types[-1] == "transcript", types
    error = wyoming[types.index("error")]
    assert error.data["text"] == "Transcription failed" and error.data["code"] == "processing_error"
    assert_recognized(speech[FIRST], wyoming[-1].data["text"])

    assert statuses == [200, 200]
    [done] = [e for e in after if e["type"] == "transcription.done"]
    assert_recognized(speech[SECOND], done["text"])
    failures = [line for line in log.splitlines() if "engine failed this session: " in line]
    assert len(failures) == 3, log[-3000:]
    assert all("The built-in engine failed while transcribing (ValueError: " in line for line in failures)
    assert "Traceback" in log  # the decode's traceback is in the server's log, for whoever debugs it
