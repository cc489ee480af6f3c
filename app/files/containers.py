"""Audio tracks of compressed and video containers (m4a/AAC, Opus, MP4, MKV, WebM) via PyAV."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from voxdesk.engine.errors import VoxdeskError

__all__ = ["ContainerError", "read_container"]


class ContainerError(VoxdeskError):
    """PyAV is missing, or FFmpeg found no decodable audio track; the message says which."""


def read_container(path: Path) -> tuple[np.ndarray, int]:
    """The first audio track of ``path`` as mono float32 samples at their own rate, and that rate."""
    try:
        import av

        ffmpeg_error = av.FFmpegError  # the installers' bundle has a stand-in without it
    except ImportError as exc:
        raise ContainerError("PyAV is not installed (pip install av)") from exc
    except AttributeError as exc:
        raise ContainerError(str(exc)) from exc
    try:
        with av.open(str(path)) as container:
            if not container.streams.audio:
                raise ContainerError("no audio track")
            stream = container.streams.audio[0]
            rate = stream.codec_context.sample_rate or 48000
            resampler = av.AudioResampler(format="flt", layout="mono", rate=rate)
            parts = [
                converted.to_ndarray().reshape(-1)
                for frame in container.decode(stream)
                for converted in resampler.resample(frame)
            ]
            parts += [flushed.to_ndarray().reshape(-1) for flushed in resampler.resample(None)]
    except ffmpeg_error as exc:
        raise ContainerError(exc.strerror or type(exc).__name__) from exc
    samples = np.concatenate(parts).astype(np.float32) if parts else np.zeros(0, np.float32)
    return samples, rate
