"""Every error Voxdesk raises on purpose, in one tree.

Each one descends from :class:`VoxdeskError` (a few also keep a builtin base for older
callers), so the command line catches them all: one that reaches ``voxdesk`` prints its
message and ends with exit status 1. The second column says how each surfaces: the
``/v1/realtime`` error code that reports the same failure, the CLI exit status, or
"window" for errors only the desktop app meets (it shows them as a problem, never a code).
The third names the module that defines it, below ``voxdesk``.

::

    VoxdeskError               exit 1          engine.errors        base of them all
    ├── AudioFormatError       invalid_audio   engine.errors        audio that breaks the session contract (ValueError)
    ├── AudioBufferFull        buffer_full     engine.errors        a push-style feed holds too much unread audio
    ├── EngineUnavailable      exit 1          engine.errors        an engine that cannot load (missing package, model)
    ├── ProtocolError          its own code    engine.wire          a peer broke the protocol: ``error`` with its code
    ├── InsecureBindError      exit 1          server               serving beyond loopback without a key (RuntimeError)
    ├── EngineStopped          exit 1          server               the engine of ``voxdesk serve`` stopped for good
    ├── OpenAIRequestError     its own code    engine.wire          a ProtocolError: an OpenAI event refused
    ├── WyomingProtocolError   its own code    engine.wire          a ProtocolError: a Wyoming event with bad fields
    ├── FramingError           invalid_json    engine.wire          bytes that are not Wyoming events: connection closed
    ├── WyomingAddressError    exit 1          engine.wire          a ``--wyoming`` or server address that is not tcp://HOST:PORT
    ├── ServerLost             its own code    engine.failover      a lost server: connection_lost, then the next one
    ├── KeyRefused             exit 1          engine.remote        a server refused the API key (an EngineUnavailable)
    ├── UnreadableFrame        its own code    engine.remote        an unreadable server frame: that server is left
    ├── AudioFileError         exit 1          app.files            a file that cannot be read as audio
    ├── ContainerError         exit 1          app.files            no audio track PyAV decodes (becomes AudioFileError)
    ├── HistoryError           exit 1          app.history          a history request that failed
    ├── ExportError            exit 1          app.history          an export format that does not exist
    ├── MicrophoneUnavailable  window          app.listening        no input device can be opened
    ├── PlaybackUnavailable    exit 1          app.speaking         no output device for a spoken reply (voxdesk say)
    ├── CommandFileError       window          app.actions          a command file that cannot be read or parsed
    ├── LlmError               window          app.llm              an LLM unreachable, refusing or late: text kept
    └── ActionError            window          app.actions          an action that could not be done
"""

from __future__ import annotations

__all__ = ["AudioBufferFull", "AudioFormatError", "EngineUnavailable", "VoxdeskError", "one_line"]

_DETAIL_CHARS = 160


class VoxdeskError(Exception):
    """Base class of every error Voxdesk raises on purpose."""


class AudioFormatError(VoxdeskError, ValueError):
    """Audio that is not what the streaming-session contract asks for."""


class AudioBufferFull(VoxdeskError):
    """More audio was pushed than the feed may hold before the engine reads it."""


class EngineUnavailable(VoxdeskError):
    """The engine cannot run here; the message says what to install or fix."""


def one_line(exc: BaseException) -> str:
    """An unexpected exception as a user may read it inside a sentence: ``ValueError: its first
    line``, cut to a few words more than a line."""
    lines = str(exc).strip().splitlines()
    detail = lines[0] if lines else ""
    if len(detail) > _DETAIL_CHARS:
        detail = detail[: _DETAIL_CHARS - 1].rstrip() + "…"
    return f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
