"""Voxdesk's OpenAI Realtime engine through a real ``voxdesk serve`` process on loopback: from
``voxdesk transcribe --dialect openai``, from the engine API, across a cut connection, and the
same words as over the vLLM dialect and Wyoming from the same server."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator

import numpy as np
import pytest

from tests.cli.test_wyoming_serve import Serve, start_wyoming_serve
from tests.conftest import fixture_path
from tests.recognition import assert_recognized, words
from tests.serve_process import REPO
from tests.speech_fixtures import Fixture
from tests.tcp_proxy import CuttableProxy
from voxdesk.app.files.transcription import transcribe_audio
from voxdesk.engine import StreamError, StreamingEngine, TextDelta, UtteranceDone
from voxdesk.engine.events import EngineEvent
from voxdesk.engine.remote.openai import OpenAIRealtimeEngine, OpenAISettings
from voxdesk.engine.remote.realtime import VllmRealtimeEngine, VllmRealtimeSettings
from voxdesk.engine.remote.wyoming import WyomingEngine, WyomingSettings


@pytest.fixture(scope="module")
def serve() -> Iterator[Serve]:
    server = start_wyoming_serve()
    yield server
    server.process.send_signal(signal.SIGTERM)
    assert server.process.wait(timeout=30) == 0


def _openai(port: int) -> OpenAIRealtimeEngine:
    return OpenAIRealtimeEngine(OpenAISettings(url=f"ws://127.0.0.1:{port}/v1", api_key="sk-dummy"))


async def _final_text(engine: StreamingEngine, audio: np.ndarray) -> str:
    await engine.load()
    return (await transcribe_audio(engine, audio, realtime=False)).text


def test_voxdesk_transcribe_dialect_openai(serve: Serve, speech: dict[str, Fixture]) -> None:
    fixture = speech["command13-slt"]
    url = f"ws://127.0.0.1:{serve.websocket_port}/v1"
    command = [sys.executable, "-m", "voxdesk.cli.main", "transcribe", "--server", url, "--dialect", "openai"]
    result = subprocess.run(
        [*command, "--api-key", "sk-dummy", str(fixture_path(fixture))],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert_recognized(fixture, result.stdout.split("Transcript:")[1].splitlines()[1])


def test_the_engine_api_streams_a_fixture_at_real_time_pace(
    serve: Serve, speech: dict[str, Fixture], fixture_audio: dict[str, np.ndarray]
) -> None:
    fixture = speech["command09-slt"]

    async def scenario() -> list[EngineEvent]:
        engine = _openai(serve.websocket_port)
        await engine.load()
        report = await transcribe_audio(engine, fixture_audio[fixture.name], realtime=True)
        return [t.event for t in report.timeline]

    events = asyncio.run(scenario())
    assert not [e for e in events if isinstance(e, StreamError)]
    [done] = [e for e in events if isinstance(e, UtteranceDone)]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == done.text
    assert_recognized(fixture, done.text)


def test_a_cut_connection_mid_phrase_still_gives_the_whole_phrase(
    serve: Serve, speech: dict[str, Fixture], fixture_audio: dict[str, np.ndarray]
) -> None:
    fixture = speech["command12-slt"]
    audio = fixture_audio[fixture.name]

    async def paced() -> AsyncIterator[np.ndarray]:
        for start in range(0, len(audio), 1600):
            await asyncio.sleep(0.1)
            yield audio[start : start + 1600]

    async def scenario() -> tuple[list[EngineEvent], int]:
        async with CuttableProxy(serve.websocket_port) as proxy:
            engine = _openai(proxy.port)

            async def cut_midway() -> None:
                await asyncio.sleep(len(audio) / 16_000 / 2)
                proxy.cut()

            cutting = asyncio.create_task(cut_midway())
            events = [e async for e in engine.stream(paced())]
            await cutting
            return events, proxy.cuts

    events, cuts = asyncio.run(scenario())
    assert cuts == 1
    assert [(e.code, e.fatal) for e in events if isinstance(e, StreamError)] == [("connection_lost", False)]
    [done] = [e for e in events if isinstance(e, UtteranceDone)]
    assert_recognized(fixture, done.text)


def test_the_same_audio_gives_the_same_text_over_all_three_dialects(
    serve: Serve, speech: dict[str, Fixture], fixture_audio: dict[str, np.ndarray]
) -> None:
    fixture = speech["command12-slt"]
    audio = fixture_audio[fixture.name]
    engines: dict[str, StreamingEngine] = {
        "vllm": VllmRealtimeEngine(VllmRealtimeSettings(url=f"ws://127.0.0.1:{serve.websocket_port}")),
        "openai": _openai(serve.websocket_port),
        "wyoming": WyomingEngine(WyomingSettings(url=f"tcp://127.0.0.1:{serve.wyoming_port}")),
    }
    texts = {name: asyncio.run(_final_text(engine, audio)) for name, engine in engines.items()}
    assert_recognized(fixture, texts["vllm"])
    assert words(texts["openai"]) == words(texts["vllm"]) == words(texts["wyoming"]), texts
