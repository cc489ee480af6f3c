"""Reading audio files: any rate and channel count, and clear errors for bad files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile

from voxdesk.app.files.reading import AudioFileError, read_audio


def tone(seconds: float, rate: int, frequency: float = 440.0) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    return (0.5 * np.sin(2 * np.pi * frequency * t)).astype(np.float32)


def dominant_frequency(audio: np.ndarray) -> float:
    spectrum = np.abs(np.fft.rfft(audio))
    return float(np.argmax(spectrum) * 16_000 / len(audio))


@pytest.mark.parametrize(
    ("rate", "channels", "subtype", "suffix"),
    [
        (44_100, 2, "PCM_16", "wav"),
        (8_000, 1, "PCM_U8", "wav"),
        (48_000, 1, "FLOAT", "wav"),
        (22_050, 1, "PCM_16", "flac"),
        (16_000, 6, "PCM_24", "flac"),
    ],
)
def test_any_rate_channel_count_and_sample_format_becomes_16k_mono(
    tmp_path: Path, rate: int, channels: int, subtype: str, suffix: str
) -> None:
    path = tmp_path / f"tone.{suffix}"
    soundfile.write(str(path), np.repeat(tone(1.0, rate)[:, None], channels, axis=1), rate, subtype=subtype)
    audio = read_audio(path)
    assert audio.dtype == np.float32 and audio.ndim == 1
    assert abs(len(audio) - 16_000) <= 2
    assert abs(dominant_frequency(audio) - 440) <= 2
    assert 0.45 < np.abs(audio).max() <= 0.55


def test_a_truncated_wav_yields_the_audio_that_is_there(tmp_path: Path) -> None:
    whole = tmp_path / "whole.wav"
    soundfile.write(str(whole), tone(2.0, 16_000), 16_000, subtype="PCM_16")
    cut = tmp_path / "cut.wav"
    cut.write_bytes(whole.read_bytes()[: 44 + 16_000 * 2])  # header claims 2 s, 1 s present
    audio = read_audio(cut)
    assert abs(len(audio) - 16_000) <= 2
    assert abs(dominant_frequency(audio) - 440) <= 2


def test_clipped_samples_are_kept_in_range(tmp_path: Path) -> None:
    path = tmp_path / "loud.wav"
    soundfile.write(str(path), np.full(16_000, 3.0, np.float32), 16_000, subtype="FLOAT")
    assert np.abs(read_audio(path)).max() <= 1.0


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "empty"),
        (b"hello, I am not audio\n", "not a readable audio file"),
        (b"RIFF\x24\x00\x00\x00WAVEfmt ", "not a readable audio file"),
    ],
)
def test_files_that_are_not_audio_get_a_clear_error(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.wav"
    path.write_bytes(content)
    with pytest.raises(AudioFileError, match=message):
        read_audio(path)


def test_a_wav_without_samples_gets_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "header-only.wav"
    soundfile.write(str(path), np.zeros(0, np.float32), 16_000, subtype="PCM_16")
    with pytest.raises(AudioFileError, match="no audio samples"):
        read_audio(path)


def test_missing_files_and_directories_get_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(AudioFileError, match="no such file"):
        read_audio(tmp_path / "missing.wav")
    with pytest.raises(AudioFileError, match="directory"):
        read_audio(tmp_path)


def test_a_text_file_named_mp3_says_it_holds_text_and_the_decoders_keep_quiet(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "readme.mp3"
    path.write_text("Read me first.\n")
    with pytest.raises(AudioFileError) as error:
        read_audio(path)
    assert str(error.value) == f"{path}: not a readable audio file: it holds text, not audio"
    assert capfd.readouterr().err == ""  # mpg123's "Illegal Audio-MPEG-Header" notes went to the log


@pytest.mark.parametrize(
    ("content", "holds"),
    [(b"\x89PNG\r\n\x1a\n" + bytes(64), "a PNG image"), (bytes(range(256)), "data of no audio format Voxdesk knows")],
    ids=["png", "binary"],
)
def test_a_file_that_is_not_audio_is_named_by_what_it_holds(tmp_path: Path, content: bytes, holds: str) -> None:
    path = tmp_path / "song.wav"
    path.write_bytes(content)
    with pytest.raises(AudioFileError, match=f"not a readable audio file: it holds {holds}"):
        read_audio(path)


def test_a_truncated_wav_read_whole_is_an_error_saying_how_much_is_there(tmp_path: Path) -> None:
    whole = tmp_path / "whole.wav"
    soundfile.write(str(whole), tone(2.0, 16_000), 16_000, subtype="PCM_16")
    cut = tmp_path / "cut.wav"
    cut.write_bytes(whole.read_bytes()[: 44 + 16_000 * 2])
    with pytest.raises(AudioFileError) as error:
        read_audio(cut, whole=True)
    assert str(error.value) == f"{cut}: truncated: 32000 of 64000 bytes of audio"
    assert len(read_audio(whole, whole=True)) == 32_000


def test_a_wav_written_to_a_pipe_has_no_length_and_is_not_truncated(tmp_path: Path) -> None:
    """Writers to a pipe (ffmpeg, arecord) cannot go back to fill in the sizes: they leave 0xFFFFFFFF."""
    whole = tmp_path / "whole.wav"
    soundfile.write(str(whole), tone(1.0, 16_000), 16_000, subtype="PCM_16")
    data = bytearray(whole.read_bytes())
    data[4:8] = data[40:44] = b"\xff\xff\xff\xff"
    streamed = tmp_path / "streamed.wav"
    streamed.write_bytes(bytes(data))
    assert abs(len(read_audio(streamed, whole=True)) - 16_000) <= 2
