"""Client failover for the OpenAI Realtime and Wyoming client engines: ``voxdesk transcribe``
at real-time pace with three servers listed, a refused one first and two real ``voxdesk serve
--wyoming`` processes after it, the first of which is killed (SIGKILL) in the middle of the
phrase."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.cli.test_failover import audio_received
from tests.cli.test_wyoming_serve import Serve, start_wyoming_serve
from tests.conftest import fixture_path
from tests.recognition import assert_recognized
from tests.serve_process import REPO
from tests.speech_fixtures import Fixture

PHRASE = "command12-slt"  # 3.2 s


@pytest.fixture
def servers() -> Iterator[tuple[Serve, Serve]]:
    first, second = start_wyoming_serve(), start_wyoming_serve()
    yield first, second
    first.process.kill()
    second.process.send_signal(signal.SIGTERM)
    second.process.wait(timeout=30)
    first.process.wait(timeout=30)


def closed_port() -> int:
    """A loopback port nothing listens on: connections to it are refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def transcribe(urls: list[str], fixture: Fixture, *extra: str) -> subprocess.Popen[str]:
    """``voxdesk transcribe --json --realtime`` of ``fixture`` over the servers ``urls``."""
    command = [
        *(sys.executable, "-m", "voxdesk.cli.main", "transcribe", "--json", "--realtime", "--no-history"),
        *(arg for url in urls for arg in ("--server", url)),
        *extra,
        str(fixture_path(fixture)),
    ]
    return subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def check_failed_over(events: list[dict[str, Any]], lost_url: str, next_url: str, fixture: Fixture) -> None:
    """One non-fatal loss of ``lost_url`` (so the refused first URL was skipped) for
    ``next_url``, then the whole phrase from it."""
    [lost] = [e for e in events if e["type"] == "error"]
    assert lost["code"] == "connection_lost" and not lost["fatal"]
    assert f"{lost_url} lost" in lost["message"] and f"going on with {next_url}" in lost["message"]
    assert [e["type"] for e in events][-2:] == ["done", "summary"]
    assert_recognized(fixture, events[-1]["text"])


def test_openai_dialect_skips_a_refused_server_and_fails_over_mid_phrase(
    servers: tuple[Serve, Serve], speech: dict[str, Fixture]
) -> None:
    first, second = servers
    fixture = speech[PHRASE]
    urls = [f"ws://127.0.0.1:{port}/v1" for port in (closed_port(), first.websocket_port, second.websocket_port)]
    client = transcribe(urls, fixture, "--dialect", "openai", "--api-key", "sk-dummy")
    try:
        deadline = time.monotonic() + 60
        # OpenAI sends no text before the commit: the first server is killed once it holds 1 s of the phrase.
        while audio_received(first.websocket_port) < 1.0:
            assert client.poll() is None and time.monotonic() < deadline, "the first server got no audio"
            time.sleep(0.05)
        first.process.send_signal(signal.SIGKILL)
        out, errors = client.communicate(timeout=120)
    finally:
        client.kill()
    assert client.returncode == 0, errors
    events = [json.loads(line) for line in out.splitlines()]
    lost, going_on = (f"ws://127.0.0.1:{s.websocket_port}/v1/realtime?intent=transcription" for s in servers)
    check_failed_over(events, lost, going_on, fixture)
    assert audio_received(second.websocket_port) >= fixture.duration - 0.1, "the heard audio was not replayed"


def test_wyoming_skips_a_refused_server_and_fails_over_mid_phrase_retracting_the_streamed_text(
    servers: tuple[Serve, Serve], speech: dict[str, Fixture]
) -> None:
    first, second = servers
    fixture = speech[PHRASE]
    urls = [f"tcp://127.0.0.1:{port}" for port in (closed_port(), first.wyoming_port, second.wyoming_port)]
    client = transcribe(urls, fixture)
    try:
        assert client.stdout is not None
        events = []
        for line in client.stdout:
            event = json.loads(line)
            events.append(event)
            if event["type"] == "provisional" and event["text"].strip() and first.process.poll() is None:
                first.process.send_signal(signal.SIGKILL)  # mid-phrase: its first words are shown
        status = client.wait(timeout=120)
        errors = client.stderr.read() if client.stderr else ""
    finally:
        client.kill()
    assert status == 0, errors
    check_failed_over(events, urls[1], urls[2], fixture)
    types = [e["type"] for e in events]
    retracted = types.index("retracted")
    assert "provisional" in types[:retracted], "the first server was not lost mid-phrase"
    assert types.index("error") < retracted < types.index("delta"), "the lost server's text was not withdrawn first"


def test_transcribe_refuses_a_list_mixing_wyoming_and_websocket_servers(speech: dict[str, Fixture]) -> None:
    command = [sys.executable, "-m", "voxdesk.cli.main", "transcribe", "--no-history"]
    servers = ["--server", "tcp://127.0.0.1:10300", "--server", "ws://127.0.0.1:8000"]
    result = subprocess.run(
        [*command, *servers, str(fixture_path(speech[PHRASE]))], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 1
    assert "mix Wyoming servers (tcp://127.0.0.1:10300) with WebSocket ones (ws://127.0.0.1:8000)" in result.stderr
