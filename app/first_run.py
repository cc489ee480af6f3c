"""The first-run set-up, Qt-free: is this the first start, is there a CUDA device, a microphone
check that keeps the last seconds to play back, playback, and a real connection test for a
speech server. The window's set-up dialog drives these."""

from __future__ import annotations

import collections
import ctypes
import logging
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

from voxdesk.app.engines import build_engine
from voxdesk.app.listening.capture import AudioCapture, AudioLevel, CaptureStatus
from voxdesk.app.settings import EngineSettings, settings_path
from voxdesk.engine.session import SAMPLE_RATE

__all__ = ["MicrophoneCheck", "check_server", "cuda_device", "is_first_run"]

logger = logging.getLogger("voxdesk.setup")

PLAYBACK_SECONDS = 3.0


def is_first_run(path: Path | None = None) -> bool:
    """True when no settings file exists yet."""
    return not (path or settings_path()).exists()


def cuda_device() -> str | None:
    """The first CUDA device's name, asked of the NVIDIA driver (no PyTorch needed); None when
    there is no driver or no device."""
    library = "nvcuda.dll" if sys.platform == "win32" else "libcuda.so.1"
    try:
        cuda = ctypes.CDLL(library)
    except OSError:
        return None
    count, device = ctypes.c_int(0), ctypes.c_int(0)
    if cuda.cuInit(0) != 0 or cuda.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value < 1:
        return None
    name = ctypes.create_string_buffer(256)
    if cuda.cuDeviceGet(ctypes.byref(device), 0) != 0 or cuda.cuDeviceGetName(name, len(name), device) != 0:
        return "CUDA device"
    return name.value.decode(errors="replace") or "CUDA device"


class MicrophoneCheck:
    """Listens on one microphone while :meth:`run` runs: each chunk's level goes to
    ``on_level``, and the last ``keep_seconds`` are kept for :meth:`recording`."""

    def __init__(
        self,
        device: str,
        on_level: Callable[[AudioLevel], None],
        on_status: Callable[[CaptureStatus], None] | None = None,
        keep_seconds: float = PLAYBACK_SECONDS,
    ) -> None:
        self.capture = AudioCapture(device, on_status=on_status, on_level=on_level)
        self._kept: collections.deque[np.ndarray] = collections.deque()
        self._keep = int(keep_seconds * SAMPLE_RATE)
        self._held = 0

    async def run(self) -> None:
        """Capture until cancelled.

        Raises:
            MicrophoneUnavailable: there is no microphone at all.
        """
        async for chunk, _ in self.capture.chunks():
            self._kept.append(chunk)
            self._held += len(chunk)
            while self._held - len(self._kept[0]) >= self._keep:
                self._held -= len(self._kept.popleft())

    def recording(self) -> np.ndarray:
        """The last seconds heard (16 kHz mono float32), at most ``keep_seconds``."""
        audio = np.concatenate(list(self._kept)) if self._kept else np.zeros(0, np.float32)
        return audio[-self._keep :]


async def check_server(choice: EngineSettings) -> str:
    """Connect to the server ``choice`` names as the engine would (handshake, key, model) and
    close again; what was reached, in words.

    Raises:
        EngineUnavailable: it cannot be reached, refuses the key, or does not serve the model.
    """
    engine = build_engine(choice)
    try:
        await engine.load()
    finally:
        await engine.aclose()
    return f"connected to {choice.server_url}"
