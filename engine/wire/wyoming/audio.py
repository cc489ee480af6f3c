"""Wyoming PCM audio to the engine's 16 kHz mono float32, chunk by chunk (§2.3, §8.1 item 5).

Each ``audio-chunk`` states its own format; the resampler keeps its state across chunks of
one format and starts afresh when the format changes.
"""

from __future__ import annotations

import numpy as np
import soxr

from voxdesk.engine.session import SAMPLE_RATE
from voxdesk.engine.wire.wyoming.events import AudioFormat, ErrorCode, WyomingProtocolError

__all__ = ["MAX_RATE", "MIN_RATE", "WIDTHS", "AudioConverter", "to_pcm16"]

WIDTHS = (2, 3, 4)
"""Signed little-endian sample widths taken, in bytes. 8-bit PCM is refused: WAV stores it
unsigned but the ``wyoming`` library converts it as signed, so its meaning is unclear."""

MIN_RATE, MAX_RATE = 8_000, 192_000


def to_pcm16(samples: np.ndarray) -> bytes:
    """Float32 samples in [-1, 1] as 16-bit signed little-endian PCM bytes."""
    return bytes((np.clip(samples, -1.0, 1.0) * 32767).astype("<i2").tobytes())


def _check(audio_format: AudioFormat, size: int) -> None:
    if audio_format.width not in WIDTHS:
        raise WyomingProtocolError(
            ErrorCode.INVALID_AUDIO, f"unsupported sample width {audio_format.width}: send 16, 24 or 32-bit PCM"
        )
    if not MIN_RATE <= audio_format.rate <= MAX_RATE:
        raise WyomingProtocolError(
            ErrorCode.INVALID_AUDIO, f"unsupported rate {audio_format.rate} Hz: send {MIN_RATE} to {MAX_RATE} Hz"
        )
    if size % (audio_format.width * audio_format.channels):
        raise WyomingProtocolError(
            ErrorCode.INVALID_AUDIO, "audio-chunk payload is not a whole number of samples for its width and channels"
        )


def _decode(audio: bytes, width: int) -> np.ndarray:
    """Signed little-endian PCM to float32 in [-1, 1)."""
    if width == 3:  # no 24-bit dtype: widen each sample to 32 bits, low byte zero
        raw = np.frombuffer(audio, np.uint8).reshape(-1, 3)
        wide = np.zeros((len(raw), 4), np.uint8)
        wide[:, 1:] = raw
        return np.frombuffer(wide.tobytes(), "<i4").astype(np.float32) / np.float32(2**31)
    ints = np.frombuffer(audio, f"<i{width}")
    return ints.astype(np.float32) / np.float32(2 ** (8 * width - 1))


class AudioConverter:
    """Converts one request's chunks; keep one per request."""

    def __init__(self) -> None:
        self._format: AudioFormat | None = None
        self._resampler: soxr.ResampleStream | None = None

    def convert(self, audio_format: AudioFormat, audio: bytes) -> np.ndarray:
        """``audio`` in ``audio_format`` as 16 kHz mono float32 (possibly empty).

        Raises:
            WyomingProtocolError: ``invalid_audio`` for a width, rate or payload length
                this cannot take.
        """
        _check(audio_format, len(audio))
        if audio_format != self._format:
            self._format = audio_format
            rate = audio_format.rate
            self._resampler = None if rate == SAMPLE_RATE else soxr.ResampleStream(rate, SAMPLE_RATE, 1, "float32")
        samples = _decode(audio, audio_format.width)
        if audio_format.channels > 1:
            samples = samples.reshape(-1, audio_format.channels).mean(axis=1, dtype=np.float32)
        if self._resampler is not None:
            samples = self._resampler.resample_chunk(samples)
        return np.ascontiguousarray(samples, dtype=np.float32)

    def flush(self) -> np.ndarray:
        """The resampler's last samples, at the end of the request's audio."""
        if self._resampler is None:
            return np.zeros(0, np.float32)
        return np.ascontiguousarray(self._resampler.resample_chunk(np.zeros(0, np.float32), last=True), np.float32)
