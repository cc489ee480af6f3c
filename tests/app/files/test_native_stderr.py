"""What C code writes to file descriptor 2 is captured, not shown, and the descriptor comes back."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from voxdesk.app.files.native_stderr import native_stderr
from voxdesk.app.files.reading import AudioFileError, read_audio


def test_writes_to_descriptor_2_come_back_as_lines_and_stderr_is_restored(capfd: pytest.CaptureFixture[str]) -> None:
    with native_stderr() as lines:
        os.write(2, b"first note\n\n   second note  \n")
        assert lines == []  # filled once the block ends
    assert lines == ["first note", "second note"]
    os.write(2, b"after\n")
    assert capfd.readouterr().err == "after\n"


def test_mpg123s_notes_on_a_text_file_go_to_the_debug_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "readme.mp3"
    path.write_text("Read me first.\nThis is not a song.\n")
    with caplog.at_level(logging.DEBUG, logger="voxdesk.files"), pytest.raises(AudioFileError):
        read_audio(path)
    assert capfd.readouterr().err == ""
    (notes,) = [r.getMessage() for r in caplog.records if r.getMessage().startswith("decoder notes: ")]
    assert "Illegal Audio-MPEG-Header" in notes
