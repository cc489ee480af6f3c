"""The kinds of speech engine Voxdesk can run."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["EngineKind"]


class EngineKind(StrEnum):
    """Which engine: settings, ``--engine`` and the window's selector all use these.

    The values are what ``settings.toml`` and the command line hold; never change them.
    """

    BUILTIN = "builtin"  # faster-whisper on the CPU
    VLLM = "vllm"  # a local vLLM on the GPU
    REMOTE = "remote"  # any /v1/realtime server
