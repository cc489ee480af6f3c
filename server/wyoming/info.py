"""The ``info`` ``voxdesk serve --wyoming`` gives for the built-in engine."""

from __future__ import annotations

from voxdesk.engine.whisper.catalog import whisper_languages
from voxdesk.engine.wire.wyoming.info import AsrModel, ServiceInfo

__all__ = ["whisper_info"]

_WHISPER = {"name": "OpenAI", "url": "https://github.com/openai/whisper"}


def whisper_info(model: str, language: str, version: str) -> ServiceInfo:
    """The built-in engine's ``info``: its Whisper model and the languages it takes."""
    description = f"Whisper {model} (faster-whisper)"
    return ServiceInfo(AsrModel(model, whisper_languages(model, language), description=description), version, _WHISPER)
