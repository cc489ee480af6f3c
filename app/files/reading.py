"""Reading audio files as the 16 kHz mono float32 that engines take."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from voxdesk.engine.errors import VoxdeskError
from voxdesk.engine.session import SAMPLE_RATE

__all__ = ["AudioFileError", "read_audio"]


class AudioFileError(VoxdeskError):
    """A file that cannot be read as audio; the message says why in plain words."""


def read_audio(path: str | Path) -> np.ndarray:
    """Decode ``path`` to 16 kHz mono float32.

    WAV, FLAC, OGG, MP3, … are read by libsndfile; anything else (m4a/AAC, Opus, the audio
    track of MP4, MKV or WebM video) by FFmpeg through PyAV (:mod:`voxdesk.app.files.containers`).

    Any sample rate and channel count is accepted: channels are averaged and the rate is
    converted with soxr's high-quality resampler.

    Raises:
        AudioFileError: the file is missing, not audio, or holds no samples.
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
        samples, rate = soundfile.read(str(path), dtype="float32", always_2d=True)
        mono = samples.mean(axis=1, dtype=np.float32)
    except (soundfile.LibsndfileError, RuntimeError, TypeError) as exc:
        try:
            mono, rate = read_container(path)
        except ContainerError as container_exc:
            raise AudioFileError(
                f"{path}: not a readable audio file ({_reason(exc)}; FFmpeg: {container_exc})"
            ) from container_exc
    if mono.shape[0] == 0:
        raise AudioFileError(f"{path}: the file holds no audio samples")
    if rate != SAMPLE_RATE:
        mono = soxr.resample(mono, rate, SAMPLE_RATE, quality="HQ")
    mono = np.nan_to_num(np.asarray(mono, np.float32), nan=0.0, posinf=1.0, neginf=-1.0)
    return np.ascontiguousarray(np.clip(mono, -1.0, 1.0))


def _reason(exc: Exception) -> str:
    text = str(exc).split(":")[-1].strip() if str(exc) else type(exc).__name__
    return text or type(exc).__name__
