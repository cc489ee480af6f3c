"""Errors raised by Voxdesk's engines.

::

    VoxdeskError
    ├── AudioFormatError      audio that breaks the session contract (shape, type, values)
    ├── AudioBufferFull       a push-style feed holds more unread audio than allowed
    └── EngineUnavailable     an engine that cannot be loaded (missing package, bad model files)
"""

from __future__ import annotations

__all__ = ["AudioBufferFull", "AudioFormatError", "EngineUnavailable", "VoxdeskError"]


class VoxdeskError(Exception):
    """Base class of every error Voxdesk raises on purpose."""


class AudioFormatError(VoxdeskError, ValueError):
    """Audio that is not what the streaming-session contract asks for."""


class AudioBufferFull(VoxdeskError):
    """More audio was pushed than the feed may hold before the engine reads it."""


class EngineUnavailable(VoxdeskError):
    """The engine cannot run here; the message says what to install or fix."""
