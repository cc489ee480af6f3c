"""The realtime speech models the vLLM engine offers in the window's model picker.

Each runs as it is with Voxdesk's engine settings (``VllmSettings``: the Mistral tokenizer and
formats); any other hub id or folder of a model vLLM marks ``supports_realtime`` can be typed in.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["REALTIME_MODELS", "RealtimeModel"]


@dataclass(frozen=True)
class RealtimeModel:
    """A realtime model by its hub id, with a few words for people."""

    name: str
    description: str


REALTIME_MODELS = (
    RealtimeModel(
        "mistralai/Voxtral-Mini-4B-Realtime-2602",
        "Voxtral Mini 4B Realtime (Mistral): streaming transcription, needs an NVIDIA GPU",
    ),
)
"""Known realtime models, the default first."""
