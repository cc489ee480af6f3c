"""A FAKE speech scorer for tests of what sits on the speech gate; Silero VAD itself is tested
in ``tests/engine/test_vad.py``."""

from __future__ import annotations

import numpy as np

from voxdesk.engine.audio.endpoint import VAD_WINDOW


def script(*runs: tuple[float, int]) -> np.ndarray:
    """Per-window speech probabilities: (probability, windows) pairs, in order."""
    return np.concatenate([np.full(windows, p, np.float32) for p, windows in runs])


class FakeScorer:
    """FAKE scorer: whatever the audio, the scripted probability of each VAD window it completes
    (0 once the script runs out), windows counted from the first sample as Silero VAD does."""

    def __init__(self, probabilities: np.ndarray) -> None:
        self._probabilities = probabilities
        self._samples = 0  # fed so far
        self._windows = 0  # scored so far

    def __call__(self, samples: np.ndarray) -> np.ndarray:
        self._samples += len(samples)
        count = self._samples // VAD_WINDOW - self._windows
        scored = self._probabilities[self._windows : self._windows + count]
        self._windows += count
        return np.pad(scored, (0, count - len(scored)))
