"""``voxdesk serve`` as a real process: start-up, refusal of insecure binds, graceful SIGTERM."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys

import numpy as np
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from tests.recognition import SAMPLE, assert_heard_in, assert_recognized
from tests.serve_process import REPO, start_serve
from tests.speech_fixtures import Fixture
from voxdesk.engine.remote.realtime import encode_audio

pytestmark = pytest.mark.integration  # runs voxdesk serve as a process


def test_serve_refuses_a_public_address_without_an_api_key() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "voxdesk.cli.main", "serve", "--host", "0.0.0.0", "--port", "0"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "VOXDESK_API_KEY": ""},
    )
    assert result.returncode == 1
    assert "refusing to listen on 0.0.0.0 without an API key" in result.stderr
    assert "Traceback" not in result.stderr


def test_sigterm_finishes_the_open_utterance_then_closes(
    speech: dict[str, Fixture], fixture_audio: dict[str, np.ndarray]
) -> None:
    process, port = start_serve("--drain-timeout", "0", "--shutdown-grace", "20")
    audio = fixture_audio["command09-slt"]

    async def scenario() -> tuple[dict[str, object], int | None]:
        async with connect(f"ws://127.0.0.1:{port}/v1/realtime") as socket:
            await socket.recv()
            await socket.send(json.dumps({"type": "session.update", "model": "voxdesk-builtin"}))
            await socket.send(json.dumps({"type": "input_audio_buffer.commit"}))
            for start in range(0, len(audio), 8000):
                chunk = encode_audio(audio[start : start + 8000])
                await socket.send(json.dumps({"type": "input_audio_buffer.append", "audio": chunk}))
            await asyncio.sleep(0.5)
            process.send_signal(signal.SIGTERM)  # mid-utterance: no final commit was sent
            done: dict[str, object] = {}
            try:
                while True:
                    event = json.loads(await asyncio.wait_for(socket.recv(), 30))
                    if event["type"] == "transcription.done":
                        done = event
            except ConnectionClosed:
                pass
            return done, socket.close_code

    try:
        done, close_code = asyncio.run(scenario())
        assert process.wait(timeout=30) == 0
    finally:
        process.kill()
    assert_recognized(speech["command09-slt"], str(done.get("text", "")))
    assert close_code == 1001


def test_serve_answers_health_models_and_metrics_over_http() -> None:
    import urllib.request

    process, port = start_serve("--served-model-name", "my-asr")
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=10) as response:
            assert response.status == 200
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=10) as response:
            assert [m["id"] for m in json.load(response)["data"]] == ["my-asr"]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
            assert "vllm:websocket_connections_active" in response.read().decode()
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0


def test_transcribe_through_serve_with_an_api_key() -> None:
    process, port = start_serve("--api-key", "sesame")
    sample = SAMPLE.path
    try:
        base = [sys.executable, "-m", "voxdesk.cli.main", "transcribe", "--fast", "--server", f"ws://127.0.0.1:{port}"]
        refused = subprocess.run([*base, sample], cwd=REPO, capture_output=True, text=True, timeout=60)
        assert refused.returncode == 1 and "refused the API key" in refused.stderr
        allowed = subprocess.run(
            [*base, "--api-key", "sesame", sample], cwd=REPO, capture_output=True, text=True, timeout=120
        )
        assert allowed.returncode == 0, allowed.stderr
        transcript = allowed.stdout.split("Transcript:")[1].splitlines()[1]
        assert_heard_in(SAMPLE, transcript)
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
