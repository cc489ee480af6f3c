"""A real Whisper decoder whose one chosen decode fails inside CTranslate2, mid-utterance."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from tests.engine.wrapped_decoder import WrappedDecoder
from voxdesk.engine.whisper.decoder import Guess, WhisperDecoder

__all__ = ["FailingDecoder"]


class FailingDecoder(WrappedDecoder):
    """The first partial decode after ``after_finals`` final decodes raises; every other call
    is the real decoder's.

    The failure is CTranslate2's own: that partial hands the real encoder features of the wrong
    shape, and the ``ValueError`` the C++ extension raises goes up the engine's real path (the
    decode thread, its future, the session). With ``after_finals=1`` and two utterances the
    first is transcribed whole and the second fails while it is being spoken.
    """

    def __init__(self, decoder: WhisperDecoder, after_finals: int = 1) -> None:
        super().__init__(decoder)
        self._after_finals = after_finals
        self._finals = 0
        self._lock = threading.Lock()  # decodes run on the decode queue's two threads
        self.failed = threading.Event()
        """Set once the failing decode has raised."""

    def final(self, *args: Any) -> list[str]:
        words = self._decoder.final(*args)
        with self._lock:
            self._finals += 1
        return words

    def partial(self, *args: Any, **kwargs: Any) -> Guess:
        with self._lock:
            due = self._finals >= self._after_finals and not self.failed.is_set()
            if due:
                self.failed.set()
        if due:
            self._encode_malformed()
        return self._decoder.partial(*args, **kwargs)

    def _encode_malformed(self) -> None:
        import ctranslate2

        features = np.zeros((1, 81, 3000), np.float32)  # Whisper's encoder takes 80 mel bins
        self._decoder.model.model.encode(ctranslate2.StorageView.from_array(features))
        raise AssertionError("CTranslate2 took features of the wrong shape")
