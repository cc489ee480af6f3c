"""A base for test decoders that change one call of the real Whisper decoder and pass the rest through."""

from __future__ import annotations

from typing import Any

from voxdesk.engine.whisper.decoder import WhisperDecoder


class WrappedDecoder:
    """Every attribute the subclass does not define comes from the real ``decoder``."""

    def __init__(self, decoder: WhisperDecoder) -> None:
        self._decoder = decoder

    def __getattr__(self, name: str) -> Any:
        return getattr(self._decoder, name)
