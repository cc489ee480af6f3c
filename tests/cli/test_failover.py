"""Client failover without losing words: ``voxdesk transcribe`` with two real ``voxdesk serve``
processes, the first killed (SIGKILL) in the middle of the recording."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.request

from tests.conftest import fixture_path
from tests.recognition import ACCURACY, wer
from tests.serve_process import REPO, start_serve
from tests.speech_fixtures import Fixture

PASSAGE = "passage-slt"


def audio_received(port: int) -> float:
    """Seconds of audio a server says it received (``/metrics``)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        for line in response.read().decode().splitlines():
            if line.startswith("voxdesk_realtime_audio_seconds_received_total "):
                return float(line.split()[1])
    raise AssertionError("no audio counter in /metrics")


def test_transcribe_fails_over_to_the_second_server_and_loses_no_words(speech: dict[str, Fixture]) -> None:
    first, first_port = start_serve(drain=True)
    second, second_port = start_serve(drain=True)
    fixture = speech[PASSAGE]
    command = [
        *(sys.executable, "-m", "voxdesk.cli.main", "transcribe", "--json", "--no-history"),
        *("--server", f"ws://127.0.0.1:{first_port}", "--server", f"ws://127.0.0.1:{second_port}"),
        str(fixture_path(fixture)),
    ]
    client = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert client.stdout is not None
        events = []
        for line in client.stdout:
            event = json.loads(line)
            events.append(event)
            if event["type"] == "delta" and event["text"].strip() and first.poll() is None:
                first.send_signal(signal.SIGKILL)  # mid-utterance: text has started coming back
        status = client.wait(timeout=120)
        errors = client.stderr.read() if client.stderr else ""
        served = audio_received(second_port)
    finally:
        client.kill()
        first.kill()
        second.send_signal(signal.SIGTERM)
        second.wait(timeout=30)
    assert status == 0, errors
    types = [e["type"] for e in events]
    assert "retracted" in types, "the first server was not lost mid-utterance"
    [lost] = [e for e in events if e["type"] == "error"]
    assert lost["code"] == "connection_lost" and not lost["fatal"]
    summary = events[-1]
    assert summary["type"] == "summary"
    after = types[types.index("retracted") :]
    assert "delta" in after and after[-2:] == ["done", "summary"]
    assert served >= fixture.duration - 0.5, "the second server did not get the whole recording"
    error_rate = wer([fixture.text], [summary["text"]])
    assert error_rate <= ACCURACY[PASSAGE].max_wer, (error_rate, summary["text"])
