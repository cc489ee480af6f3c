"""``voxdesk serve --wyoming`` as a real process, driven by the official ``wyoming`` client
(``AsyncTcpClient``), by raw sockets for the error rows of the conformance checklist
(``shared/docs/wyoming-reference.md`` §8.1), and by Voxdesk's own Wyoming engine."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import threading
import wave
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import soxr
from websockets.asyncio.client import connect
from wyoming.asr import Transcribe, Transcript, TranscriptChunk, TranscriptStart, TranscriptStop
from wyoming.audio import AudioChunk, AudioStart, AudioStop, wav_to_chunks
from wyoming.client import AsyncTcpClient
from wyoming.event import Event
from wyoming.info import Describe, Info
from wyoming.ping import Ping

from tests.conftest import fixture_path
from tests.recognition import assert_recognized, words
from tests.serve_process import REPO
from tests.speech_fixtures import Fixture
from voxdesk.engine.remote.realtime import encode_audio

pytestmark = pytest.mark.integration  # runs voxdesk serve --wyoming as a process


@dataclass(frozen=True)
class Serve:
    """A running ``voxdesk serve`` with both listeners."""

    process: subprocess.Popen[str]
    websocket_port: int
    wyoming_port: int


@dataclass(frozen=True)
class Result:
    """What a Wyoming client received for one request."""

    text: str
    chunks: list[str]
    events: list[str]


def start_wyoming_serve(*args: str) -> Serve:
    """``voxdesk serve`` on free loopback ports with ``--wyoming``; stderr drained in a thread."""
    process = subprocess.Popen(
        [sys.executable, "-m", "voxdesk.cli.main", "serve", "--port", "0", "--wyoming", "tcp://127.0.0.1:0", *args],
        cwd=REPO,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "VOXDESK_API_KEY": ""},
    )
    assert process.stderr is not None
    ports: dict[str, int] = {}
    for line in process.stderr:
        if match := re.search(r"listening on ws://[\d.]+:(\d+)/", line):
            ports["ws"] = int(match.group(1))
        if match := re.search(r"Wyoming on tcp://[\d.]+:(\d+)", line):
            ports["wyoming"] = int(match.group(1))
            threading.Thread(target=process.stderr.read, daemon=True).start()
            return Serve(process, ports["ws"], ports["wyoming"])
    process.wait(timeout=10)
    raise AssertionError(f"voxdesk serve exited with {process.returncode} before listening")


@pytest.fixture(scope="module")
def serve() -> Iterator[Serve]:
    server = start_wyoming_serve()
    yield server
    server.process.send_signal(signal.SIGTERM)
    assert server.process.wait(timeout=30) == 0


async def describe(port: int) -> Info:
    """``describe`` on a fresh connection with Home Assistant's 1 s budget (§6)."""
    async with AsyncTcpClient("127.0.0.1", port, connect_timeout=2, read_timeout=1) as client:
        await client.write_event(Describe().event())
        event = await client.read_event()
        assert event is not None
        return Info.from_event(event)


async def read_response(client: AsyncTcpClient) -> Result:
    """Events until ``transcript-stop``, checking the streaming order (§3)."""
    chunks: list[str] = []
    seen: list[str] = []
    text: str | None = None
    while (event := await client.read_event()) is not None:
        seen.append(event.type)
        if TranscriptChunk.is_type(event.type):
            assert "transcript-start" in seen, "transcript-start must come first"
            chunks.append(TranscriptChunk.from_event(event).text)
        elif Transcript.is_type(event.type):
            text = Transcript.from_event(event).text
        elif TranscriptStop.is_type(event.type):
            assert text is not None, "transcript must come before transcript-stop"
            break
    assert text is not None, f"no transcript; received {seen}"
    assert seen.count("transcript") == 1 and TranscriptStart.is_type(seen[0])
    return Result(text, chunks, seen)


async def transcribe_wav(port: int, path: Path, skip_audio_start: bool = False) -> Result:
    """The reference's §9 client: ``transcribe``, the WAV in 1024-sample chunks, ``audio-stop``."""
    async with AsyncTcpClient("127.0.0.1", port, connect_timeout=2, read_timeout=60) as client:
        await client.write_event(Transcribe(language="en").event())
        with wave.open(str(path), "rb") as audio:
            if not skip_audio_start:
                await client.write_event(
                    AudioStart(
                        rate=audio.getframerate(), width=audio.getsampwidth(), channels=audio.getnchannels()
                    ).event()
                )
            for chunk in wav_to_chunks(audio, samples_per_chunk=1024):
                await client.write_event(chunk.event())
        await client.write_event(AudioStop().event())
        return await read_response(client)


def test_the_wyoming_client_transcribes_a_fixture(serve: Serve, speech: dict[str, Fixture]) -> None:
    info = asyncio.run(describe(serve.wyoming_port))
    (asr,) = info.asr
    assert asr.installed and asr.supports_transcript_streaming
    assert [(m.name, m.languages, m.installed) for m in asr.models] == [("tiny.en", ["en"], True)]  # English-only
    result = asyncio.run(transcribe_wav(serve.wyoming_port, fixture_path(speech["command09-slt"])))
    assert_recognized(speech["command09-slt"], result.text)
    assert "".join(result.chunks).strip() == result.text.strip()


def test_other_rates_and_channels_are_converted(
    serve: Serve, speech: dict[str, Fixture], fixture_audio: dict[str, np.ndarray], tmp_path: Path
) -> None:
    samples = soxr.resample(fixture_audio["command00-slt"], 16000, 24000)
    stereo = np.repeat((np.clip(samples, -1, 1) * 32767).astype("<i2"), 2)
    path = tmp_path / "stereo-24k.wav"
    with wave.open(str(path), "wb") as out:
        out.setnchannels(2)
        out.setsampwidth(2)
        out.setframerate(24000)
        out.writeframes(stereo.tobytes())
    result = asyncio.run(transcribe_wav(serve.wyoming_port, path))
    assert_recognized(speech["command00-slt"], result.text)


def test_audio_chunks_without_audio_start_are_transcribed(serve: Serve, speech: dict[str, Fixture]) -> None:
    result = asyncio.run(transcribe_wav(serve.wyoming_port, fixture_path(speech["command02-slt"]), True))
    assert_recognized(speech["command02-slt"], result.text)


async def raw_exchange(port: int, data: bytes) -> bytes:
    """Send ``data`` on a raw socket and read until the server closes it (or 10 s)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    await writer.drain()
    try:
        return await asyncio.wait_for(reader.read(), 10)
    finally:
        writer.close()


@pytest.mark.parametrize(
    "garbage", [b"this is not json\n", b'{"data": {"text": "no type"}}\n', b'{"type": "' + b"x" * 70_000 + b'"}\n']
)
def test_a_malformed_header_closes_that_connection_only(serve: Serve, garbage: bytes) -> None:
    assert asyncio.run(raw_exchange(serve.wyoming_port, garbage)) == b""  # closed without a word
    assert asyncio.run(describe(serve.wyoming_port)).asr[0].installed


def test_unknown_events_are_ignored_and_the_connection_stays(serve: Serve) -> None:
    async def scenario() -> list[Event | None]:
        async with AsyncTcpClient("127.0.0.1", serve.wyoming_port, connect_timeout=2, read_timeout=10) as client:
            await client.write_event(Event("select-program", {"name": "voxdesk"}))
            await client.write_event(Event("no-such-event", {"x": 1}))
            await client.write_event(Ping(text="still there?").event())
            await client.write_event(Describe().event())
            return [await client.read_event() for _ in range(2)]

    pong, info = asyncio.run(scenario())
    assert pong is not None and (pong.type, pong.data) == ("pong", {"text": "still there?"})
    assert info is not None and info.type == "info"


def test_a_wrong_audio_format_is_refused_with_an_error_then_a_transcript(serve: Serve) -> None:
    async def scenario() -> tuple[Event | None, Result]:
        async with AsyncTcpClient("127.0.0.1", serve.wyoming_port, connect_timeout=2, read_timeout=30) as client:
            await client.write_event(AudioStart(rate=16000, width=1, channels=1).event())
            await client.write_event(AudioChunk(rate=16000, width=1, channels=1, audio=bytes(1600)).event())
            error = await client.read_event()
            await client.write_event(AudioStop().event())
            return error, await read_response(client)

    error, result = asyncio.run(scenario())
    assert error is not None and error.type == "error" and error.data["code"] == "invalid_audio"
    assert "width 1" in error.data["text"]
    assert result.text == ""


def test_a_connection_dropped_mid_stream_leaves_the_server_serving(serve: Serve, speech: dict[str, Fixture]) -> None:
    async def drop() -> None:
        client = AsyncTcpClient("127.0.0.1", serve.wyoming_port)
        await client.connect()
        await client.write_event(AudioStart(rate=16000, width=2, channels=1).event())
        with wave.open(str(fixture_path(speech["command09-slt"])), "rb") as audio:
            for _, chunk in zip(range(20), wav_to_chunks(audio, samples_per_chunk=1024), strict=False):
                await client.write_event(chunk.event())
        await client.disconnect()  # mid-request: no audio-stop

    asyncio.run(drop())
    result = asyncio.run(transcribe_wav(serve.wyoming_port, fixture_path(speech["command09-slt"])))
    assert_recognized(speech["command09-slt"], result.text)


def test_voxdesk_transcribe_uses_a_wyoming_server(serve: Serve, speech: dict[str, Fixture]) -> None:
    fixture = speech["command13-slt"]
    command = [
        sys.executable,
        "-m",
        "voxdesk.cli.main",
        "transcribe",
        "--server",
        f"tcp://127.0.0.1:{serve.wyoming_port}",
    ]
    result = subprocess.run(
        [*command, str(fixture_path(fixture))], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert_recognized(fixture, result.stdout.split("Transcript:")[1].splitlines()[1])


def test_the_same_audio_gives_the_same_text_over_both_dialects(
    serve: Serve, speech: dict[str, Fixture], fixture_audio: dict[str, np.ndarray]
) -> None:
    fixture = speech["command12-slt"]
    audio = fixture_audio[fixture.name]

    async def realtime() -> str:
        async with connect(f"ws://127.0.0.1:{serve.websocket_port}/v1/realtime") as socket:
            await socket.recv()
            await socket.send(json.dumps({"type": "session.update", "model": "voxdesk-builtin"}))
            await socket.send(json.dumps({"type": "input_audio_buffer.commit"}))
            for start in range(0, len(audio), 1024):
                chunk = encode_audio(audio[start : start + 1024])
                await socket.send(json.dumps({"type": "input_audio_buffer.append", "audio": chunk}))
            await socket.send(json.dumps({"type": "input_audio_buffer.commit", "final": True}))
            while True:
                event = json.loads(await asyncio.wait_for(socket.recv(), 60))
                if event["type"] == "transcription.done":
                    return str(event["text"])

    over_realtime = asyncio.run(realtime())
    over_wyoming = asyncio.run(transcribe_wav(serve.wyoming_port, fixture_path(fixture))).text
    assert_recognized(fixture, over_wyoming)
    assert words(over_wyoming) == words(over_realtime), (over_wyoming, over_realtime)


@pytest.mark.parametrize(
    ("wyoming", "message"),
    [
        ("tcp://0.0.0.0:0", "refusing to serve Wyoming on 0.0.0.0"),
        ("http://127.0.0.1:10300", "is not a Wyoming address"),
    ],
)
def test_serve_refuses_a_public_or_bad_wyoming_address(wyoming: str, message: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "voxdesk.cli.main", "serve", "--port", "0", "--api-key", "k", "--wyoming", wyoming],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert message in result.stderr and "Traceback" not in result.stderr
