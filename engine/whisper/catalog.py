"""The Whisper models a user can choose, with their download size, languages and whether they are on disk."""

from __future__ import annotations

from dataclasses import dataclass

from voxdesk.engine.whisper.cache import StoredModel, multilingual, stored_models
from voxdesk.engine.whisper.models import BUNDLED_MODEL, resolve_model

__all__ = ["CATALOG", "ModelChoice", "language_codes", "model_choices", "whisper_languages"]

_MILLIONS_OF_PARAMETERS = {
    "tiny": 39,
    "base": 74,
    "small": 244,
    "medium": 769,
    "large-v1": 1550,
    "large-v2": 1550,
    "large-v3": 1550,
    "large-v3-turbo": 809,
    "distil-small.en": 166,
    "distil-medium.en": 394,
    "distil-large-v2": 756,
    "distil-large-v3": 756,
    "distil-large-v3.5": 756,
}
_ENGLISH_ONLY_FAMILIES = ("distil-small.en", "distil-medium.en", "distil-large")
"""Distil-Whisper models transcribe English only, though their vocabulary is multilingual."""

CATALOG = (
    "tiny.en",
    "tiny",
    "base.en",
    "base",
    "small.en",
    "small",
    "medium.en",
    "medium",
    "large-v3-turbo",
    "large-v3",
    "large-v2",
    "distil-small.en",
    "distil-medium.en",
    "distil-large-v3",
    "distil-large-v3.5",
)
"""faster-whisper's model names, smallest first within each family (``large`` and ``turbo`` are aliases)."""


@dataclass(frozen=True)
class ModelChoice:
    """One model in the chooser: its name, size in bytes, languages and whether it is on disk."""

    name: str
    size: int
    multilingual: bool
    downloaded: bool

    @property
    def label(self) -> str:
        """``small.en — 488 MB, English only, downloaded``."""
        languages = "multilingual" if self.multilingual else "English only"
        if self.name == BUNDLED_MODEL:
            where = "bundled"
        else:
            where = "downloaded" if self.downloaded else "download on first use"
        return f"{self.name} — {_megabytes(self.size)}, {languages}, {where}"


def model_choices() -> list[ModelChoice]:
    """Every catalog model (download size estimated as float16 weights), then other models on disk."""
    stored = {model.name: model for model in stored_models()}
    choices = [_choice(name, stored.get(name)) for name in CATALOG]
    others = [model for name, model in stored.items() if name not in CATALOG]
    return choices + [ModelChoice(model.name, model.size, model.multilingual, True) for model in others]


def language_codes() -> list[str]:
    """The language codes multilingual Whisper models know, as ``--language`` takes them."""
    from faster_whisper.tokenizer import _LANGUAGE_CODES

    return sorted(_LANGUAGE_CODES)


def _choice(name: str, stored: StoredModel | None) -> ModelChoice:
    multilingual = not name.endswith(".en") and not name.startswith(_ENGLISH_ONLY_FAMILIES)
    if stored is not None:
        return ModelChoice(name, stored.size, multilingual, True)
    family = name if name.startswith("distil-") else name.removesuffix(".en")
    return ModelChoice(name, _MILLIONS_OF_PARAMETERS[family] * 2_000_000, multilingual, False)


def _megabytes(size: int) -> str:
    return f"{size / 1e9:.1f} GB" if size >= 1e9 else f"{size / 1e6:.0f} MB"


def whisper_languages(model: str, language: str) -> tuple[str, ...]:
    """The languages a Whisper ``model`` transcribes when set to ``language`` (``auto`` or a code):
    a fixed language alone; ``en`` for English-only models; else every Whisper language."""
    if language != "auto":
        return (language,)
    choice = next((choice for choice in model_choices() if choice.name == model), None)
    is_multilingual = choice.multilingual if choice is not None else multilingual(resolve_model(model))
    return tuple(language_codes()) if is_multilingual else ("en",)
