"""``voxdesk say`` and ``voxdesk voices``, run as the command line runs them."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.desktop_rig import VirtualMic
from tests.recognition import PHRASE_ERRORS, errors_within, words
from voxdesk.app.files.reading import read_audio
from voxdesk.app.files.transcription import transcribe_audio
from voxdesk.cli.main import main
from voxdesk.engine.whisper.builtin import BuiltinEngine

PHRASE = "open the browser and search for the weather in paris"


def test_say_writes_what_it_says_to_a_file_and_the_words_are_heard_again(
    engine: BuiltinEngine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "said.wav"
    assert main(["say", PHRASE, "--backend", "festival", "--voice", "cmu_us_slt_arctic_hts", "-o", str(out)]) == 0
    assert capsys.readouterr().err.startswith(f"{out}: ")
    heard = asyncio.run(transcribe_audio(engine, read_audio(out), realtime=False)).text
    assert errors_within(words(PHRASE), words(heard)) <= PHRASE_ERRORS, heard


def test_say_plays_on_the_loudspeaker(virtual_mic: VirtualMic, tmp_path: Path) -> None:
    recorder = virtual_mic.record_speaker(tmp_path / "played.wav")
    assert main(["say", "The timer is up.", "--rate", "1.2"]) == 0
    virtual_mic.finish_recording(recorder, tmp_path / "played.wav")
    assert abs(read_audio(tmp_path / "played.wav")).max() > 0.1


def test_voices_lists_each_backend_and_says_why_one_has_none(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["voices"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert any(line.split()[:2] == ["espeak-ng", "en-us"] for line in listed)
    assert any(line.split()[:2] == ["festival", "cmu_us_slt_arctic_hts"] for line in listed)
    assert any(line.split()[:2] == ["openai", "alloy"] for line in listed)
    monkeypatch.setenv("PATH", str(Path(__file__).parent))  # no synthesizer programs here
    assert main(["voices", "--backend", "festival"]) == 1
    assert capsys.readouterr().err == (
        "festival: Festival is not installed (Debian and Ubuntu: sudo apt install festival festvox-us-slt-hts)\n"
    )
