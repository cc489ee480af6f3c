"""Microphone capture through PortAudio from the virtual PulseAudio microphone."""

from __future__ import annotations

import asyncio
import wave
from pathlib import Path

import numpy as np

from tests.desktop_rig import VirtualMic
from voxdesk.app.listening.capture import (
    AudioCapture,
    AudioLevel,
    CaptureState,
    CaptureStatus,
    _Converter,
    list_input_devices,
)
from voxdesk.engine.session import SAMPLE_RATE


def tone_file(path: Path, frequency: float, seconds: float = 1.5, rate: int = 48_000) -> Path:
    t = np.arange(int(seconds * rate)) / rate
    samples = (0.5 * np.sin(2 * np.pi * frequency * t) * 32767).astype("<i2")
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(samples.tobytes())
    return path


def dominant_frequency(samples: np.ndarray) -> float:
    spectrum = np.abs(np.fft.rfft(samples * np.hanning(len(samples))))
    return float(np.fft.rfftfreq(len(samples), 1 / SAMPLE_RATE)[np.argmax(spectrum)])


def test_a_missing_device_falls_back_to_the_default_with_a_warning_and_hears_a_tone(
    virtual_mic: VirtualMic, tmp_path: Path
) -> None:
    assert any(device.is_default for device in list_input_devices(refresh=True))
    statuses: list[CaptureStatus] = []
    levels: list[AudioLevel] = []

    async def scenario() -> np.ndarray:
        capture = AudioCapture("USB Headset (unplugged)", on_status=statuses.append, on_level=levels.append)
        heard: list[np.ndarray] = []
        chunks = capture.chunks()
        async for chunk, _ in chunks:
            if not heard:
                virtual_mic.play(tone_file(tmp_path / "tone.wav", 440.0))
            heard.append(chunk)
            if sum(len(c) for c in heard) >= 2.5 * SAMPLE_RATE:
                break
        await chunks.aclose()
        return np.concatenate(heard)

    audio = asyncio.run(scenario())
    (status,) = statuses
    assert status.state == CaptureState.FALLBACK
    assert "'USB Headset (unplugged)' is not connected" in status.message and status.device in status.message
    assert audio.dtype == np.float32 and audio.ndim == 1
    assert abs(dominant_frequency(audio) - 440.0) < 5
    assert 0.3 < max(level.peak for level in levels) < 0.8


def test_devices_that_cannot_do_16_khz_mono_are_converted() -> None:
    rate, seconds = 44_100, 1.0
    t = np.arange(int(rate * seconds)) / rate
    stereo = np.stack([np.sin(2 * np.pi * 1000 * t), np.sin(2 * np.pi * 1000 * t)], axis=1).astype(np.float32) * 0.5
    convert = _Converter(rate, channels=2)
    blocks = [convert(stereo[i : i + 882]) for i in range(0, len(stereo), 882)]  # 20 ms blocks
    audio = np.concatenate(blocks)
    held_back = SAMPLE_RATE * seconds - len(audio)  # the streaming resampler's filter delay
    assert audio.dtype == np.float32 and 0 <= held_back < 0.03 * SAMPLE_RATE
    assert abs(dominant_frequency(audio[2000:]) - 1000.0) < 5


def test_level_is_rms_and_peak() -> None:
    level = AudioLevel.of(np.array([0.5, -0.5, 0.5, -0.5], np.float32))
    assert (level.rms, level.peak) == (0.5, 0.5)
    assert AudioLevel.of(np.zeros(0, np.float32)) == AudioLevel(0.0, 0.0)
