"""Which synthesizer the speech settings name."""

from __future__ import annotations

from voxdesk.engine.tts.espeak import EspeakSynthesizer
from voxdesk.engine.tts.festival import FestivalSynthesizer
from voxdesk.engine.tts.openai_speech import OpenAiSpeech
from voxdesk.engine.tts.speech import Synthesizer

__all__ = ["SPEECH_BACKENDS", "synthesizer_for"]

SPEECH_BACKENDS = ("espeak-ng", "festival", "openai")
"""espeak-ng or Festival on this computer (espeak-ng the default), or an OpenAI-compatible
``/v1/audio/speech`` server."""


def synthesizer_for(
    backend: str, voice: str = "", rate: float = 1.0, url: str = "", model: str = "", api_key: str = ""
) -> Synthesizer:
    """The synthesizer called ``backend`` (one of :data:`SPEECH_BACKENDS`).

    Raises:
        ValueError: an unknown backend.
    """
    if backend == "espeak-ng":
        return EspeakSynthesizer(voice, rate)
    if backend == "festival":
        return FestivalSynthesizer(voice, rate)
    if backend == "openai":
        return OpenAiSpeech(url, model, voice, rate, api_key)
    raise ValueError(f"unknown speech backend {backend!r}; choose one of: {', '.join(SPEECH_BACKENDS)}")
