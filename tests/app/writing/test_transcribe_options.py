"""``voxdesk transcribe --mode/--vocabulary`` refusing bad input before anything is loaded: one
line naming the mode or the file, exit status 2, no traceback (in-process: argparse stops first)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from voxdesk.app.files.transcription import TimedEvent, TranscriptionReport, UtteranceReport
from voxdesk.cli.main import build_parser, main
from voxdesk.cli.writing import decoder_vocabulary, transcript_mode, transcript_writer
from voxdesk.engine.events import TextDelta, UtteranceDone


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    (line,) = [line for line in err.splitlines() if "error:" in line]
    return line


def test_an_unknown_mode_is_named_with_the_modes_there_are(capsys: pytest.CaptureFixture[str]) -> None:
    line = _refused(["transcribe", "--mode", "poetry", "a.wav"], capsys)
    assert "--mode" in line and "'poetry'" in line and "plain, prose, clean, message, code" in line


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ("Zoë\n".encode("latin-1"), "not UTF-8 text (byte 0xeb at offset 2)"),
        (b"Xochitl\n= oops\n= again\n", ":2: no word before '=': '= oops' (and 1 more)"),
        (None, "no such file"),
    ],
    ids=["not-utf8", "bad-lines", "missing"],
)
def test_a_bad_vocabulary_file_is_named(
    content: bytes | None, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "words.txt"
    if content is not None:
        path.write_bytes(content)
    line = _refused(["transcribe", "--vocabulary", str(path), "a.wav"], capsys)
    assert "--vocabulary" in line and str(path) in line and said in line


def test_without_mode_or_vocabulary_the_transcript_is_the_engines() -> None:
    args = build_parser().parse_args(["transcribe", "a.wav"])
    mode = transcript_mode(args)
    assert mode is None and transcript_writer(mode, args) is None and decoder_vocabulary(args, mode) == ()


def test_a_vocabulary_alone_writes_each_final_text_in_the_plain_mode(tmp_path: Path) -> None:
    words = tmp_path / "words.txt"
    words.write_text("Xochitl = so chee tl\n", encoding="utf-8")
    args = build_parser().parse_args(["transcribe", "--vocabulary", str(words), "a.wav"])
    mode = transcript_mode(args)
    write = transcript_writer(mode, args)
    assert write is not None and decoder_vocabulary(args, mode) == ("Xochitl",)
    heard = ["Ask Zacha tool.", "Three thirty pm."]
    report = TranscriptionReport(
        audio_seconds=2.0,
        timeline=[TimedEvent(TextDelta(heard[0], audio_time=1.0), 0.5)],
        utterances=[UtteranceReport(UtteranceDone(text, 1.0, 0.0, 1.0), None, None) for text in heard],
    )
    written = asyncio.run(write(report))
    assert written.text == "Ask Xochitl. Three thirty pm."  # plain: no number formatting
    assert written.timeline == report.timeline and report.text == " ".join(heard)
