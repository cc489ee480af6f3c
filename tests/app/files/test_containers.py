"""Compressed and video containers (m4a, mp4, webm) made from a WAV fixture with PyAV, read and
transcribed like their source."""

from __future__ import annotations

import asyncio
import sys
import types
from pathlib import Path

import av
import numpy as np
import pytest
import soxr

from tests.recognition import assert_recognized
from tests.speech_fixtures import Fixture
from voxdesk.app.files.job import FileTranscription
from voxdesk.app.files.reading import AudioFileError, read_audio
from voxdesk.engine.session import SAMPLE_RATE
from voxdesk.engine.whisper.builtin import BuiltinEngine


def encode(audio: np.ndarray, path: Path, container: str, codec: str, rate: int) -> None:
    """Write 16 kHz mono ``audio`` as ``codec`` at ``rate`` in ``container``."""
    samples = audio if rate == SAMPLE_RATE else soxr.resample(audio, SAMPLE_RATE, rate)
    with av.open(str(path), "w", format=container) as output:
        stream = output.add_stream(codec, rate=rate)
        assert isinstance(stream, av.AudioStream)
        stream.layout = "mono"
        frame = av.AudioFrame.from_ndarray(np.asarray(samples, np.float32)[None, :], format="flt", layout="mono")
        frame.sample_rate = rate
        for packet in [*stream.encode(frame), *stream.encode(None)]:
            output.mux(packet)


@pytest.mark.parametrize(
    ("suffix", "container", "codec", "rate"),
    [("m4a", "mp4", "aac", 44_100), ("mp4", "mp4", "aac", 16_000), ("webm", "webm", "libopus", 48_000)],
)
def test_a_compressed_copy_transcribes_like_its_wav_source(
    engine: BuiltinEngine,
    speech: dict[str, Fixture],
    fixture_audio: dict[str, np.ndarray],
    tmp_path: Path,
    suffix: str,
    container: str,
    codec: str,
    rate: int,
) -> None:
    fixture = speech["command13-slt"]
    source = fixture_audio[fixture.name]
    path = tmp_path / f"{fixture.name}.{suffix}"
    encode(source, path, container, codec, rate)
    audio = read_audio(path)
    assert abs(len(audio) - len(source)) / SAMPLE_RATE < 0.2  # encoder priming and frame padding only
    wav_text = asyncio.run(FileTranscription(engine, source).run()).text
    copy_text = asyncio.run(FileTranscription(engine, audio).run()).text
    assert_recognized(fixture, wav_text)
    assert_recognized(fixture, copy_text)


def test_a_file_neither_libsndfile_nor_ffmpeg_reads_gets_one_clear_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.m4a"
    path.write_bytes(b"\x00\x00\x00\x18ftypM4A " + b"garbage" * 50)
    with pytest.raises(AudioFileError, match="not a readable audio file") as raised:
        read_audio(path)
    assert "FFmpeg" in str(raised.value) and "\n" not in str(raised.value)


def test_without_pyav_the_error_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stand_in = types.ModuleType("av")  # what the installers' bundle puts in PyAV's place

    def missing(name: str) -> object:
        raise AttributeError(f"PyAV (av.{name}) is not in the Voxdesk bundle")

    stand_in.__getattr__ = missing  # type: ignore[method-assign]
    monkeypatch.setitem(sys.modules, "av", stand_in)
    path = tmp_path / "talk.m4a"
    path.write_bytes(b"\x00\x00\x00\x18ftypM4A " + b"\x00" * 100)
    with pytest.raises(AudioFileError, match="not in the Voxdesk bundle"):
        read_audio(path)
