"""Reading audio files as the 16 kHz mono float32 that engines take."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from voxdesk.app.files.headers import HEAD_BYTES, content_of, shortfall
from voxdesk.app.files.native_stderr import native_stderr
from voxdesk.engine.errors import VoxdeskError
from voxdesk.engine.session import SAMPLE_RATE

__all__ = ["AudioFileError", "read_audio"]

logger = logging.getLogger("voxdesk.files")


class AudioFileError(VoxdeskError):
    """A file that cannot be read as audio; the message says why in plain words."""


def read_audio(path: str | Path, *, whole: bool = False) -> np.ndarray:
    """Decode ``path`` to 16 kHz mono float32.

    WAV, FLAC, OGG, MP3, … are read by libsndfile; anything else (m4a/AAC, Opus, the audio
    track of MP4, MKV or WebM video) by FFmpeg through PyAV (:mod:`voxdesk.app.files.containers`).

    Any sample rate and channel count is accepted: channels are averaged and the rate is
    converted with soxr's high-quality resampler. A file cut short (its header promises more
    audio than is there) gives the audio that is there, or with ``whole`` is an error.

    Raises:
        AudioFileError: the file is missing, not audio, holds no samples, or (``whole``) is cut short.
    """
    import soundfile
    import soxr

    from voxdesk.app.files.containers import ContainerError, read_container

    path = Path(path)
    if not path.exists():
        raise AudioFileError(f"{path}: no such file")
    if path.is_dir():
        raise AudioFileError(f"{path}: is a directory, not an audio file")
    if path.stat().st_size == 0:
        raise AudioFileError(f"{path}: the file is empty (0 bytes)")
    try:
        with _decoder_notes():
            samples, rate = soundfile.read(str(path), dtype="float32", always_2d=True)
        mono = samples.mean(axis=1, dtype=np.float32)
    except (soundfile.LibsndfileError, RuntimeError, TypeError) as exc:
        try:
            with _decoder_notes():
                mono, rate = read_container(path)
        except ContainerError as container_exc:
            raise AudioFileError(_undecodable(path, exc, container_exc)) from container_exc
    if whole and (short := shortfall(path)):
        raise AudioFileError(f"{path}: {short}")
    if mono.shape[0] == 0:
        raise AudioFileError(f"{path}: the file holds no audio samples")
    if rate != SAMPLE_RATE:
        mono = soxr.resample(mono, rate, SAMPLE_RATE, quality="HQ")
    mono = np.nan_to_num(np.asarray(mono, np.float32), nan=0.0, posinf=1.0, neginf=-1.0)
    return np.ascontiguousarray(np.clip(mono, -1.0, 1.0))


def _undecodable(path: Path, libsndfile: Exception, ffmpeg: Exception) -> str:
    """Why neither decoder read ``path``: what it holds, and for an audio format what they said."""
    with path.open("rb") as file:
        content = content_of(file.read(HEAD_BYTES))
    if not content.audio:
        return f"{path}: not a readable audio file: it holds {content.name}, not audio"
    reasons = f"{_reason(libsndfile)}; FFmpeg: {ffmpeg}"
    return f"{path}: not a readable audio file: {content.name} that cannot be decoded ({reasons})"


@contextlib.contextmanager
def _decoder_notes() -> Iterator[None]:
    """Log what C decoders write straight to file descriptor 2 (mpg123's "Illegal
    Audio-MPEG-Header" notes through libsndfile) at debug level instead of the terminal."""
    notes: list[str] = []
    try:
        with native_stderr() as notes:
            yield
    finally:
        if notes:
            logger.debug("decoder notes: %s", " | ".join(notes))


def _reason(exc: Exception) -> str:
    text = str(exc).split(":")[-1].strip() if str(exc) else type(exc).__name__
    return text or type(exc).__name__
