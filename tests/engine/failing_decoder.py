"""A real Whisper decoder whose one chosen decode fails inside CTranslate2, mid-utterance."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from tests.engine.wrapped_decoder import WrappedDecoder
from voxdesk.engine.whisper.decoder import Guess, WhisperDecoder

__all__ = ["FailingDecoder"]


class FailingDecoder(WrappedDecoder):
    """The first partial decode after each final decode raises; every other call is the real
    decoder's.

    So in a session of two utterances the first is transcribed whole and the second fails at
    its first partial, while it is being spoken (a session of one utterance is not failed: its
    partials come before its final). The failure is CTranslate2's own: that partial hands the
    real encoder features of the wrong shape, and the ``ValueError`` the C++ extension raises
    goes up the engine's real path (the decode thread, its future, the session).
    """

    def __init__(self, decoder: WhisperDecoder) -> None:
        super().__init__(decoder)
        self._armed = False  # a final was decoded since the last failure
        self._lock = threading.Lock()  # decodes run on the decode queue's two threads
        self.failures = 0
        """Partials failed so far."""

    def final(self, *args: Any) -> list[str]:
        words = self._decoder.final(*args)
        with self._lock:
            self._armed = True
        return words

    def partial(self, *args: Any, **kwargs: Any) -> Guess:
        with self._lock:
            fail, self._armed = self._armed, False
            self.failures += fail
        if fail:
            self._encode_malformed()
        return self._decoder.partial(*args, **kwargs)

    def _encode_malformed(self) -> None:
        import ctranslate2

        features = np.zeros((1, 81, 3000), np.float32)  # Whisper's encoder takes 80 mel bins
        self._decoder.model.model.encode(ctranslate2.StorageView.from_array(features))
        raise AssertionError("CTranslate2 took features of the wrong shape")
