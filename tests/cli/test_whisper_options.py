"""``--whisper-model``, ``--device`` and ``--language`` on ``voxdesk transcribe`` and ``serve``."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

from tests.cli.test_main import voxdesk
from tests.conftest import fixture_path
from tests.random_whisper import random_whisper
from tests.serve_process import REPO, start_serve
from tests.speech_fixtures import Fixture


def test_transcribe_with_a_random_model_folder(speech: dict[str, Fixture]) -> None:
    model = random_whisper("base.en")
    result = voxdesk(
        "transcribe",
        "--json",
        "--whisper-model",
        str(model),
        "--device",
        "cpu",
        str(fixture_path(speech["command01-slt"])),
    )
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout.splitlines()[-1])
    assert summary["type"] == "summary"
    assert summary["text"]  # meaningless words, but words


def test_streamed_utterances_say_their_language(speech: dict[str, Fixture]) -> None:
    audio = str(fixture_path(speech["command01-slt"]))
    result = voxdesk("transcribe", "--realtime", "--json", "--whisper-model", str(random_whisper("base.en")), audio)
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert [e["language"] for e in events if e["type"] == "done"] == ["en"]  # English-only: always en


def test_a_folder_that_is_not_a_model_is_one_error_line(speech: dict[str, Fixture], tmp_path: Path) -> None:
    for command in ("transcribe", "serve"):
        args = [str(fixture_path(speech["command01-slt"]))] if command == "transcribe" else ["--port", "0"]
        result = voxdesk(command, "--whisper-model", str(tmp_path), *args)
        assert result.returncode == 1
        assert result.stderr.strip().splitlines()[-1] == (
            f"voxdesk: error: {tmp_path} is not a CTranslate2 Whisper model folder (no model.bin, config.json)"
        )


def test_another_language_or_translation_with_an_english_only_model_is_an_error(speech: dict[str, Fixture]) -> None:
    audio = str(fixture_path(speech["command01-slt"]))
    result = voxdesk("transcribe", "--language", "de", audio)
    assert result.returncode == 1
    assert "Whisper tiny.en is English-only: --language de needs a multilingual model" in result.stderr
    result = voxdesk("transcribe", "--task", "translate", audio)
    assert result.returncode == 1
    assert "Whisper tiny.en is English-only: --task translate needs a multilingual model" in result.stderr


def test_a_model_name_that_is_not_downloaded_while_offline_says_so(speech: dict[str, Fixture], tmp_path: Path) -> None:
    result = voxdesk(
        "transcribe",
        "--whisper-model",
        "small.en",
        str(fixture_path(speech["command01-slt"])),
        env={"HF_HUB_CACHE": str(tmp_path), "HF_HUB_OFFLINE": "1"},
    )
    assert result.returncode == 1
    assert "'small.en' is not downloaded and the model hub cannot be reached" in result.stderr
    assert not any(tmp_path.iterdir())  # nothing half-written into the cache


def test_serve_streams_with_the_multilingual_random_model_detecting_the_language(speech: dict[str, Fixture]) -> None:
    process, port = start_serve("--whisper-model", str(random_whisper("tiny")), "--language", "auto")
    try:
        client = [
            sys.executable,
            "-m",
            "voxdesk.cli.main",
            "transcribe",
            "--json",
            "--server",
            f"ws://127.0.0.1:{port}",
        ]
        audio = str(fixture_path(speech["command01-slt"]))
        result = subprocess.run([*client, audio], cwd=REPO, capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout.splitlines()[-1])["text"]  # meaningless words, but words
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
