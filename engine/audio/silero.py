"""Silero VAD through onnxruntime: a speech probability per 512-sample window.

The model file is the one faster-whisper ships (``assets/silero_vad_v6.onnx``), run
with plain onnxruntime so no torch is needed.
"""

from __future__ import annotations

from importlib.util import find_spec
from pathlib import Path

import numpy as np

from voxdesk.engine.audio.endpoint import VAD_WINDOW
from voxdesk.engine.errors import EngineUnavailable

__all__ = ["SileroVad"]

_CONTEXT = 64  # samples of the previous window the model sees before each new one


def silero_model_path() -> Path:
    """Where faster-whisper's Silero VAD ONNX file is installed."""
    spec = find_spec("faster_whisper")
    if spec is None or not spec.submodule_search_locations:
        raise EngineUnavailable("faster-whisper is not installed: pip install faster-whisper==1.2.1")
    path = Path(next(iter(spec.submodule_search_locations))) / "assets" / "silero_vad_v6.onnx"
    if not path.is_file():
        raise EngineUnavailable(f"Silero VAD model missing at {path}; reinstall faster-whisper")
    return path


class SileroVad:
    """Streaming Silero VAD: feed samples, get one speech probability per 512-sample window."""

    def __init__(self) -> None:
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.inter_op_num_threads = 1
        options.intra_op_num_threads = 1
        options.log_severity_level = 4
        self._session = onnxruntime.InferenceSession(
            str(silero_model_path()), providers=["CPUExecutionProvider"], sess_options=options
        )
        self.reset()

    def reset(self) -> None:
        """Forget all audio seen so far."""
        self._h = np.zeros((1, 1, 128), np.float32)
        self._c = np.zeros((1, 1, 128), np.float32)
        self._context = np.zeros(_CONTEXT, np.float32)
        self._rest = np.zeros(0, np.float32)

    def probabilities(self, samples: np.ndarray) -> np.ndarray:
        """Speech probability for every window completed by ``samples``; leftovers wait."""
        audio = np.concatenate([self._rest, samples])
        count = len(audio) // VAD_WINDOW
        self._rest = audio[count * VAD_WINDOW :]
        if count == 0:
            return np.zeros(0, np.float32)
        windows = audio[: count * VAD_WINDOW].reshape(count, VAD_WINDOW)
        contexts = np.vstack([self._context[None], windows[:-1, -_CONTEXT:]])
        self._context = windows[-1, -_CONTEXT:].copy()
        # The model reads the batch axis as time and carries its LSTM state along it.
        batch = np.ascontiguousarray(np.concatenate([contexts, windows], axis=1))
        probs, self._h, self._c = self._session.run(None, {"input": batch, "h": self._h, "c": self._c})
        return np.asarray(probs, np.float32).reshape(-1)
