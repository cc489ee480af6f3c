"""``voxdesk`` run as a user would: a real process, real files, its output and exit status."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import fixture_path
from tests.recognition import assert_reaches_end, assert_recognized
from tests.speech_fixtures import Fixture

pytestmark = pytest.mark.integration  # runs voxdesk as a process

REPO = Path(__file__).resolve().parents[2]


def voxdesk(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "voxdesk.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
        env={**os.environ, **(env or {})},
    )


def transcript_of(stdout: str) -> str:
    """The line after "Transcript:" in ``voxdesk transcribe``'s output."""
    return stdout.split("Transcript:\n", 1)[1].splitlines()[0]


def test_version() -> None:
    result = voxdesk("--version")
    assert result.returncode == 0
    assert result.stdout.startswith("voxdesk ")


def test_no_arguments_prints_help_and_where_to_go() -> None:
    result = voxdesk()
    assert result.returncode == 0
    assert "transcribe" in result.stdout


def test_transcribe_realtime_prints_the_words_and_latency_figures(speech: dict[str, Fixture]) -> None:
    result = voxdesk("transcribe", "--realtime", str(fixture_path(speech["command01-slt"])))
    assert result.returncode == 0, result.stderr
    assert_recognized(speech["command01-slt"], transcript_of(result.stdout))
    assert "First partial after speech onset: median" in result.stdout
    assert "Final after end of speech" in result.stdout
    assert "Real-time factor" in result.stdout


def test_transcribe_json_prints_one_event_per_line_then_a_summary(speech: dict[str, Fixture]) -> None:
    fixture = speech["long-slt"]
    result = voxdesk("transcribe", "--fast", "--json", str(fixture_path(fixture)))
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert {line["type"] for line in lines[:-1]} <= {"delta", "provisional", "done"}
    summary = lines[-1]
    assert summary["type"] == "summary"
    done_texts = [line["text"] for line in lines if line["type"] == "done" and line["text"]]
    assert summary["text"] == " ".join(done_texts)
    assert summary["utterances"] == len(fixture.speech)
    assert_reaches_end(fixture, summary["text"])
    assert summary["audio_seconds"] == pytest.approx(fixture.duration, abs=0.01)


def test_transcribe_reaches_no_model_hub(speech: dict[str, Fixture]) -> None:
    dead = "http://127.0.0.1:9"
    env = {"HF_ENDPOINT": dead, "HTTP_PROXY": dead, "HTTPS_PROXY": dead, "ALL_PROXY": dead, "HF_HUB_OFFLINE": "0"}
    result = voxdesk("transcribe", "--fast", str(fixture_path(speech["command09-slt"])), env=env)
    assert result.returncode == 0, result.stderr
    assert_recognized(speech["command09-slt"], transcript_of(result.stdout))


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: None, "no such file"),
        (lambda p: p.write_bytes(b""), "empty"),
        (lambda p: p.write_text("just some text\n"), "not a readable audio file"),
    ],
)
def test_bad_files_exit_non_zero_with_one_clear_line(tmp_path: Path, make, message: str) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "input.wav"
    make(path)
    result = voxdesk("transcribe", str(path))
    assert result.returncode == 1
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_unknown_engine_is_a_usage_error(speech: dict[str, Fixture]) -> None:
    result = voxdesk("transcribe", "--engine", "nope", str(fixture_path(speech["command07-slt"])))
    assert result.returncode == 2
    assert "invalid choice" in result.stderr
