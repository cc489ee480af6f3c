"""``voxdesk transcribe`` on files as a user runs it: several at once, a progress bar only on a
terminal, and Ctrl-C keeping the partial transcript (real processes)."""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import soundfile
import srt

from tests.cli.test_main import REPO, voxdesk
from tests.conftest import fixture_path
from tests.recognition import assert_begins, assert_recognized
from tests.speech_fixtures import Fixture
from voxdesk.app.history.store import HistoryStore
from voxdesk.engine.session import SAMPLE_RATE


def test_several_files_one_transcript_each_and_no_progress_bar_off_a_terminal(
    dirs: dict[str, str], speech: dict[str, Fixture], tmp_path: Path
) -> None:
    fixtures = [speech["command01-slt"], speech["command12-slt"]]
    out = tmp_path / "subtitles"
    result = voxdesk(
        "transcribe", *(str(fixture_path(f)) for f in fixtures), "--output-dir", str(out), "-f", "srt", env=dirs
    )
    assert result.returncode == 0, result.stderr
    for fixture in fixtures:
        [cue] = list(srt.parse((out / f"{fixture.name}.srt").read_text()))
        assert_recognized(fixture, cue.content)
        assert f"==> {fixture_path(fixture)} <==" in result.stdout
    assert result.stdout.count("x real time") == 2
    assert "\r" not in result.stdout and "%|" not in result.stdout and "\x1b" not in result.stdout
    with HistoryStore.open() as store:
        assert len(store.sessions()) == 2 and all(s.ended_at is not None for s in store.sessions())


def test_output_takes_one_file_and_format_needs_a_destination(speech: dict[str, Fixture], tmp_path: Path) -> None:
    files = [str(fixture_path(speech["command01-slt"])), str(fixture_path(speech["command12-slt"]))]
    several = voxdesk("transcribe", *files, "-o", str(tmp_path / "a.txt"))
    assert several.returncode == 1 and "--output-dir" in several.stderr
    alone = voxdesk("transcribe", files[0], "--format", "vtt")
    assert alone.returncode == 1 and "--format needs" in alone.stderr


def test_a_progress_bar_on_a_terminal(dirs: dict[str, str], speech: dict[str, Fixture]) -> None:
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "voxdesk.cli.main", "transcribe", "--no-history", str(fixture_path(speech["long-slt"]))],
        stdout=terminal,
        stderr=subprocess.PIPE,
        cwd=REPO,
        env={**os.environ, **dirs, "COLUMNS": "120"},
    )
    os.close(terminal)
    shown = b""
    while True:
        try:
            chunk = os.read(controller, 4096)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        shown += chunk
    os.close(controller)
    assert process.wait(timeout=120) == 0
    text = shown.decode(errors="replace")
    assert "long-slt.wav" in text and "%|" in text and "left" in text
    assert "x real time" in text.split("Transcript:")[0]  # the bar's speed, before the summary


def test_ctrl_c_keeps_the_partial_transcript_in_the_output_and_the_history(
    dirs: dict[str, str], speech: dict[str, Fixture], fixture_audio: dict[str, np.ndarray], tmp_path: Path
) -> None:
    fixture = speech["long-slt"]
    recording = tmp_path / "meeting.wav"
    soundfile.write(str(recording), np.tile(fixture_audio[fixture.name], 6), SAMPLE_RATE)  # 6.5 minutes
    output = tmp_path / "meeting.json"
    process = subprocess.Popen(
        [sys.executable, "-m", "voxdesk.cli.main", "transcribe", str(recording), "-o", str(output)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env={**os.environ, **dirs},
    )
    assert process.stdout is not None
    first = process.stdout.readline()  # the first utterance: the file is being transcribed
    assert first.startswith("["), first + (process.stderr.read() if process.stderr else "")
    process.send_signal(signal.SIGINT)
    rest, errors = process.communicate(timeout=120)
    assert process.returncode == 130, errors
    assert "partial transcript" in rest

    written = json.loads(output.read_text())
    texts = [u["text"] for u in written["utterances"]]
    assert 0 < len(texts) < 6 * len(fixture.speech)
    assert_begins(fixture, " ".join(texts))
    assert written["session"]["ended_at"] is None
    with HistoryStore.open() as store:
        [session] = store.sessions()
        assert session.ended_at is None  # a file transcription that did not finish
        assert [u.text for u in store.utterances(session.id)] == texts
    listed = voxdesk("history", "list", env=dirs)
    assert "(partial)" in listed.stdout
