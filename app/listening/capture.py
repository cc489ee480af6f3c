"""Microphone capture: PortAudio (sounddevice) → 16 kHz mono float32 chunks on the event loop.

The PortAudio callback only copies the block and hands it to the loop; conversion, levels and
everything else run on the loop, and nothing here holds audio back for a slow consumer. A
device that fails or disappears is reported, and capture reopens it (or the default device)
once PortAudio can see one again.

sounddevice is imported lazily: PortAudio lists devices once, when it initializes, so the
sound server must be reachable first, and a machine without PortAudio still starts the app.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np
import soxr

from voxdesk.engine.errors import VoxdeskError
from voxdesk.engine.session import SAMPLE_RATE

__all__ = [
    "AudioCapture",
    "AudioLevel",
    "CaptureState",
    "CaptureStatus",
    "InputDevice",
    "MicrophoneUnavailable",
    "list_input_devices",
]

logger = logging.getLogger("voxdesk.audio")

BLOCK_SECONDS = 0.02
STALL_SECONDS = 1.0  # no audio for this long from an open stream means the device is gone
RETRY_SECONDS = 1.0


class MicrophoneUnavailable(VoxdeskError):
    """No input device can be opened; the message says why in plain words."""


@dataclass(frozen=True)
class InputDevice:
    name: str
    index: int
    channels: int
    default_samplerate: float
    is_default: bool


@dataclass(frozen=True)
class AudioLevel:
    """Level of one chunk, linear, 0 to 1."""

    rms: float
    peak: float

    @classmethod
    def of(cls, samples: np.ndarray) -> AudioLevel:
        if not len(samples):
            return cls(0.0, 0.0)
        return cls(float(np.sqrt(np.mean(np.square(samples)))), float(np.max(np.abs(samples))))


class CaptureState(enum.Enum):
    OPEN = "open"  # capturing from the device asked for
    FALLBACK = "fallback"  # the device asked for is missing; capturing from the default
    LOST = "lost"  # the device failed or vanished; retrying


@dataclass(frozen=True)
class CaptureStatus:
    state: CaptureState
    device: str  # the device in use, or the one that was lost
    message: str  # plain words for the user


def _sounddevice(reinitialize: bool = False) -> ModuleType:
    try:
        import sounddevice
    except OSError as exc:  # the PortAudio library itself is missing
        raise MicrophoneUnavailable(f"PortAudio is not installed ({exc})") from exc
    if reinitialize:
        # PortAudio enumerates devices only when it initializes; a device (or sound server)
        # that came or went since is invisible until it starts over. No public API does this.
        sounddevice._terminate()
        sounddevice._initialize()
    module: ModuleType = sounddevice
    return module


def list_input_devices(refresh: bool = False) -> list[InputDevice]:
    """Input devices PortAudio knows. ``refresh`` re-enumerates them first, which aborts any
    open stream: only when nothing is capturing."""
    sd = _sounddevice(reinitialize=refresh)
    try:
        default_index = sd.default.device[0]
        devices = sd.query_devices()
    except sd.PortAudioError:
        return []
    return [
        InputDevice(
            name=str(info["name"]),
            index=index,
            channels=int(info["max_input_channels"]),
            default_samplerate=float(info["default_samplerate"]),
            is_default=index == default_index,
        )
        for index, info in enumerate(devices)
        if info["max_input_channels"] > 0
    ]


def _choose(devices: list[InputDevice], wanted: str) -> tuple[InputDevice, bool]:
    """The device named ``wanted`` (or the default when ``wanted`` is empty), and whether it
    was found; otherwise the default, then the first one."""
    if wanted:
        for device in devices:
            if device.name == wanted:
                return device, True
    default = next((d for d in devices if d.is_default), devices[0])
    return default, not wanted


class _Converter:
    """Device blocks → 16 kHz mono float32."""

    def __init__(self, rate: float, channels: int) -> None:
        self._channels = channels
        self._resampler = None if rate == SAMPLE_RATE else soxr.ResampleStream(rate, SAMPLE_RATE, 1, dtype="float32")

    def __call__(self, block: np.ndarray) -> np.ndarray:
        mono = block[:, 0] if self._channels == 1 else block.mean(axis=1, dtype=np.float32)
        mono = np.ascontiguousarray(mono, dtype=np.float32)
        return mono if self._resampler is None else self._resampler.resample_chunk(mono)


class AudioCapture:
    """Captures one input device for as long as :meth:`chunks` is iterated.

    ``on_status`` hears about fallbacks, losses and recoveries; ``on_level`` gets the level of
    every chunk. Both are called on the event loop.
    """

    def __init__(
        self,
        device: str = "",
        *,
        on_status: Callable[[CaptureStatus], None] | None = None,
        on_level: Callable[[AudioLevel], None] | None = None,
    ) -> None:
        self.device = device
        self._on_status = on_status or (lambda status: None)
        self._on_level = on_level or (lambda level: None)
        self.device_in_use = ""
        self._opened = CaptureStatus(CaptureState.OPEN, "", "")
        self._reported: CaptureState | None = None

    def _report(self, status: CaptureStatus) -> None:
        """Tell ``on_status`` about a change of state (a reopen that stalls again is none)."""
        if status.state != self._reported:
            self._reported = status.state
            logger.log(logging.WARNING if status.state == CaptureState.LOST else logging.INFO, "%s", status.message)
            self._on_status(status)

    async def chunks(self) -> AsyncGenerator[tuple[np.ndarray, float], None]:
        """Yield ``(chunk, captured_at)`` pairs: 16 kHz mono float32 audio and the
        ``time.perf_counter()`` at which PortAudio handed it over.

        Raises:
            MicrophoneUnavailable: no input device at all when capture starts.
        """
        loop = asyncio.get_running_loop()
        first_attempt = True
        while True:
            try:
                stream, queue, convert = self._open(loop)
            except MicrophoneUnavailable:
                if first_attempt:
                    raise
                await asyncio.sleep(RETRY_SECONDS)
                continue
            first_attempt = False
            try:
                async for item in self._drain(stream, queue, convert):
                    yield item
            finally:
                stream.abort(ignore_errors=True)
                stream.close(ignore_errors=True)
            if self._reported is None:
                message = f"no sound comes from the microphone {self.device_in_use!r}; is it connected and allowed?"
            else:
                message = f"the microphone {self.device_in_use!r} stopped working; waiting for it to come back"
            self._report(CaptureStatus(CaptureState.LOST, self.device_in_use, message))
            await asyncio.sleep(RETRY_SECONDS)

    def _open(self, loop: asyncio.AbstractEventLoop) -> tuple[Any, asyncio.Queue[Any], _Converter]:
        sd = _sounddevice()
        devices = list_input_devices(refresh=True)  # capture owns the only stream; see devices come and go
        if not devices:
            raise MicrophoneUnavailable("no microphone found: connect one, or check the system's sound settings")
        device, found = _choose(devices, self.device)
        rate, channels = float(SAMPLE_RATE), 1
        try:
            sd.check_input_settings(device=device.index, samplerate=rate, channels=1, dtype="float32")
        except Exception:  # the device cannot do 16 kHz mono itself: take its own format and convert
            rate, channels = device.default_samplerate, min(2, device.channels)
        # Holds only blocks the loop has not got to yet, as long as whatever iterates the chunks
        # never waits on something slower: the listening session hands them on without waiting
        # to the engine's bounded AudioFeed, the one place where audio waits for an engine.
        queue: asyncio.Queue[Any] = asyncio.Queue()

        def callback(block: np.ndarray, frames: int, time_info: Any, status: Any) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, (block.copy(), time.perf_counter()))

        def finished() -> None:
            loop.call_soon_threadsafe(queue.put_nowait, None)

        try:
            stream = sd.InputStream(
                device=device.index,
                samplerate=rate,
                channels=channels,
                dtype="float32",
                blocksize=int(rate * BLOCK_SECONDS),
                callback=callback,
                finished_callback=finished,
            )
            stream.start()
        except Exception as exc:  # PortAudioError, or ALSA errors surfacing as others
            raise MicrophoneUnavailable(f"cannot open the microphone {device.name!r}: {exc}") from exc
        self.device_in_use = device.name
        if found:
            self._opened = CaptureStatus(CaptureState.OPEN, device.name, f"listening on {device.name}")
        else:
            message = f"the microphone {self.device!r} is not connected; using {device.name!r} instead"
            self._opened = CaptureStatus(CaptureState.FALLBACK, device.name, message)
        return stream, queue, _Converter(rate, channels)

    async def _drain(
        self, stream: Any, queue: asyncio.Queue[Any], convert: _Converter
    ) -> AsyncIterator[tuple[np.ndarray, float]]:
        """Converted chunks until the stream finishes or stalls. The stream counts as open once
        audio flows: a device can open and then deliver nothing."""
        opened = False
        while True:
            try:
                # Not wait_for: on 3.11 it can swallow a cancellation that races a block arriving
                # (every 20 ms here), and listening would never stop.
                async with asyncio.timeout(STALL_SECONDS):
                    item = await queue.get()
            except TimeoutError:
                return
            if item is None or not stream.active:
                return
            if not opened:
                opened = True
                self._report(self._opened)
            block, captured_at = item
            chunk = convert(block)
            self._on_level(AudioLevel.of(chunk))
            yield chunk, captured_at
