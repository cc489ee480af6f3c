"""What every speech synthesizer gives and takes: one utterance of audio, the voices it offers."""

from __future__ import annotations

import asyncio
import io
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from voxdesk.engine.errors import EngineUnavailable

__all__ = ["Speech", "Synthesizer", "Voice", "decode_wav", "run_synthesizer"]

SYNTHESIS_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Speech:
    """Synthesized audio: mono float32 samples in [-1, 1] at ``rate`` Hz."""

    samples: np.ndarray
    rate: int

    @property
    def duration(self) -> float:
        """Seconds of audio."""
        return len(self.samples) / self.rate


@dataclass(frozen=True)
class Voice:
    """A voice a synthesizer offers: the name its settings take, its language, a few words."""

    name: str
    language: str
    description: str


class Synthesizer(Protocol):
    """Turns text into speech. Both methods raise :class:`EngineUnavailable` with one line."""

    @property
    def where(self) -> str:
        """The backend in a few words (``espeak-ng``, ``the speech server at …``)."""
        ...

    async def synthesize(self, text: str) -> Speech: ...

    async def voices(self) -> Sequence[Voice]: ...


def decode_wav(data: bytes, subject: str) -> Speech:
    """WAV bytes (also a stream's header with unknown lengths, as espeak-ng writes) as mono speech.

    Raises:
        EngineUnavailable: the bytes are no WAV (``subject`` says whose).
    """
    import soundfile

    try:
        samples, rate = soundfile.read(io.BytesIO(data), dtype="float32", always_2d=True)
    except (soundfile.LibsndfileError, RuntimeError, TypeError) as error:
        raise EngineUnavailable(f"{subject} gave no audio that can be read ({error})") from None
    return Speech(np.ascontiguousarray(samples.mean(axis=1), dtype=np.float32), int(rate))


async def run_synthesizer(name: str, command: list[str], stdin: str) -> bytes:
    """A synthesizer program's output for ``stdin`` (on a thread: the window's loop runs no
    subprocesses of its own).

    Raises:
        EngineUnavailable: the program failed or took longer than :data:`SYNTHESIS_TIMEOUT_S`.
    """
    try:
        done = await asyncio.to_thread(
            subprocess.run, command, input=stdin.encode(), capture_output=True, timeout=SYNTHESIS_TIMEOUT_S
        )
    except subprocess.TimeoutExpired:
        raise EngineUnavailable(f"{name} did not finish within {SYNTHESIS_TIMEOUT_S:g} s") from None
    except OSError as error:
        raise EngineUnavailable(f"{name} could not run: {error}") from None
    if done.returncode != 0:
        why = done.stderr.decode("utf-8", "replace").strip().splitlines() or [f"exit status {done.returncode}"]
        raise EngineUnavailable(f"{name} failed: {why[-1]}")
    return bytes(done.stdout)
