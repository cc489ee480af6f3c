"""PCM for the wire: float32 mono in [-1, 1] inside, signed little-endian integers outside.

Encoding (:func:`to_pcm16`, :func:`encode_audio` for base64 in JSON), decoding
(:func:`from_pcm`, :func:`decode_audio`), and conversion to the engines' 16 kHz mono
(:class:`Resampler`, :class:`AudioConverter`). Every dialect's server core and client engine
turns audio into bytes and back here, so the same samples give the same bytes in each.
"""

from __future__ import annotations

import base64
import binascii
import importlib
from collections.abc import Callable
from typing import cast

import numpy as np
import soxr

from voxdesk.engine.session import SAMPLE_RATE
from voxdesk.engine.wire.codes import ProtocolError, WireCode

__all__ = ["WIDTHS", "AudioConverter", "Resampler", "decode_audio", "encode_audio", "from_pcm", "to_pcm16"]

WIDTHS = (2, 3, 4)
"""Sample widths :func:`from_pcm` reads, in bytes (16, 24 and 32-bit). 8-bit PCM is not one:
WAV stores it unsigned but Wyoming's library converts it as signed, so its meaning is unclear."""


def to_pcm16(samples: np.ndarray) -> bytes:
    """Float32 samples in [-1, 1] as 16-bit signed little-endian PCM bytes."""
    return bytes((np.clip(samples, -1.0, 1.0) * 32767).astype("<i2").tobytes())


def encode_audio(samples: np.ndarray) -> str:
    """Float32 samples in [-1, 1] as base64 PCM16 little-endian, as vLLM's clients send them."""
    return base64.b64encode(to_pcm16(samples)).decode("ascii")


def from_pcm(audio: bytes, width: int) -> np.ndarray:
    """Signed little-endian PCM of ``width`` bytes a sample (one of :data:`WIDTHS`) as float32 in [-1, 1)."""
    if width == 3:  # no 24-bit dtype: widen each sample to 32 bits, low byte zero
        raw = np.frombuffer(audio, np.uint8).reshape(-1, 3)
        wide = np.zeros((len(raw), 4), np.uint8)
        wide[:, 1:] = raw
        audio, width = wide.tobytes(), 4
    # One pass, one array; times 2**-(bits-1) is exactly a division by 2**(bits-1) in float32.
    samples: np.ndarray = np.multiply(
        np.frombuffer(audio, f"<i{width}"), np.float32(2.0 ** (1 - 8 * width)), dtype=np.float32
    )
    return samples


def _load_b64decode() -> Callable[..., bytes]:
    """pybase64's decoder where installed (vLLM's, several times faster), else the standard one."""
    try:
        return cast("Callable[..., bytes]", importlib.import_module("pybase64").b64decode)
    except ImportError:
        return base64.b64decode


_b64decode = _load_b64decode()


def decode_audio(data: str, max_samples: int) -> np.ndarray:
    """Base64 PCM16 little-endian mono as float32, vLLM's way (``docs/realtime-protocol.md`` §3, §5).

    Raises:
        ProtocolError: ``invalid_audio`` for bad base64, an odd byte count, no samples, or
            more than ``max_samples`` samples.
    """
    try:
        raw = _b64decode(data, validate=False)
    except (binascii.Error, ValueError):
        raise ProtocolError(WireCode.INVALID_AUDIO, "Invalid audio data") from None
    if not raw or len(raw) % 2 or len(raw) // 2 > max_samples:
        raise ProtocolError(WireCode.INVALID_AUDIO, "Invalid audio data")
    return from_pcm(raw, 2)


class Resampler:
    """One stream of float32 mono from ``source`` Hz to ``target`` Hz, its state kept across
    chunks (soxr); at the same rate the samples pass as they are."""

    def __init__(self, source: int, target: int = SAMPLE_RATE) -> None:
        self._stream = None if source == target else soxr.ResampleStream(source, target, 1, "float32")

    def resample(self, samples: np.ndarray) -> np.ndarray:
        """The samples ``samples`` complete at the target rate (possibly none)."""
        if self._stream is not None:
            samples = self._stream.resample_chunk(samples)
        return np.ascontiguousarray(samples, np.float32)

    def flush(self) -> np.ndarray:
        """The stream's last samples, at its end; start a new stream for more audio."""
        if self._stream is None:
            return np.zeros(0, np.float32)
        return np.ascontiguousarray(self._stream.resample_chunk(np.zeros(0, np.float32), last=True), np.float32)


class AudioConverter:
    """PCM chunks of any rate, width and channel count as 16 kHz mono float32; one per stream.

    Each chunk states its layout; the resampler keeps its state across chunks of one layout
    and starts afresh when the layout changes.
    """

    def __init__(self) -> None:
        self._layout: tuple[int, int, int] | None = None
        self._resampler = Resampler(SAMPLE_RATE)

    def convert(self, audio: bytes, rate: int, width: int, channels: int) -> np.ndarray:
        """``audio`` (``width`` bytes a sample, ``channels`` interleaved, at ``rate`` Hz) at 16 kHz mono."""
        if (rate, width, channels) != self._layout:
            self._layout = (rate, width, channels)
            self._resampler = Resampler(rate)
        samples = from_pcm(audio, width)
        if channels > 1:
            samples = samples.reshape(-1, channels).mean(axis=1, dtype=np.float32)
        return self._resampler.resample(samples)

    def flush(self) -> np.ndarray:
        """The resampler's last samples, at the end of the stream's audio."""
        return self._resampler.flush()
