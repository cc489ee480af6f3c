"""How loud the background is against the speech: a running SNR estimate from VAD decisions.

Every 512-sample window the VAD judged is sorted by its speech probability: a window the VAD
is sure holds no speech adds to the background's power, a voiced one to the speech's. Both
are running means in decibels, so a loud word or a door slam moves them little. The signal to
noise ratio is the speech power above the background (whose power the voiced windows also
carry) against the background.
"""

from __future__ import annotations

import numpy as np

from voxdesk.engine.audio.endpoint import VAD_WINDOW

__all__ = ["NoiseLevel"]

_FLOOR_DB = -100.0  # digital silence
_SMOOTHING = 0.02  # weight of each new window in the running means (about 1.6 s of windows)
_BACKGROUND_MAX = 0.15  # speech probability under which a window is background
_VOICED_MIN = 0.5  # and from which it is speech


class NoiseLevel:
    """Feed the stream's samples and the VAD's probabilities for them; read ``snr_db``."""

    def __init__(self) -> None:
        self._rest = np.zeros(0, np.float32)
        self._background: float | None = None
        self._speech: float | None = None

    def add(self, samples: np.ndarray, probabilities: np.ndarray) -> None:
        """Take the next ``samples`` of the stream and the probabilities of the VAD windows they
        completed (as :meth:`voxdesk.engine.audio.silero.SileroVad.probabilities` returned them)."""
        audio = np.concatenate([self._rest, samples])
        count = min(len(probabilities), len(audio) // VAD_WINDOW)
        self._rest = audio[count * VAD_WINDOW :]
        windows = audio[: count * VAD_WINDOW].reshape(count, VAD_WINDOW).astype(np.float64)
        powers = 10 * np.log10(np.maximum(np.mean(windows**2, axis=1), 10 ** (_FLOOR_DB / 10)))
        for power, probability in zip(powers, probabilities[:count], strict=True):
            if probability < _BACKGROUND_MAX:
                self._background = _mean(self._background, float(power))
            elif probability >= _VOICED_MIN:
                self._speech = _mean(self._speech, float(power))

    @property
    def snr_db(self) -> float | None:
        """Speech above the background in dB; ``None`` until both have been heard."""
        if self._background is None or self._speech is None:
            return None
        excess = 10 ** (self._speech / 10) - 10 ** (self._background / 10)
        if excess <= 0:
            return 0.0
        return float(10 * np.log10(excess) - self._background)


def _mean(current: float | None, value: float) -> float:
    return value if current is None else current + _SMOOTHING * (value - current)
