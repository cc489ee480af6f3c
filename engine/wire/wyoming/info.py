"""What a Wyoming ``info`` says about a speech-to-text service, both ways (§2.1).

The server builds its ``info`` from a :class:`ServiceInfo`; the client reads the ASR
programs of a server's ``info`` with :func:`parse_asr_programs`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from voxdesk.engine.wire.codes import WireCode
from voxdesk.engine.wire.wyoming.events import WyomingProtocolError
from voxdesk.engine.wire.wyoming.framing import Event

__all__ = ["AsrModel", "AsrProgram", "ServiceInfo", "parse_asr_programs"]

_KINDS = ("asr", "tts", "handle", "intent", "wake", "mic", "snd")


@dataclass(frozen=True)
class AsrModel:
    """One model of an ASR program and the languages it transcribes (ISO codes)."""

    name: str
    languages: tuple[str, ...]
    installed: bool = True
    description: str | None = None


@dataclass(frozen=True)
class AsrProgram:
    """An ASR program a Wyoming server offers."""

    name: str
    models: tuple[AsrModel, ...]
    installed: bool = True
    supports_transcript_streaming: bool = False


@dataclass(frozen=True)
class ServiceInfo:
    """Voxdesk's one ASR program: the engine's model, its languages, Voxdesk's version."""

    model: AsrModel
    version: str
    attribution: dict[str, str]

    def to_event(self) -> Event:
        """The ``info`` event: every field Home Assistant requires, all seven lists (§2.1, §6)."""
        model = {
            "name": self.model.name,
            "attribution": self.attribution,
            "installed": True,
            "description": self.model.description,
            "version": None,
            "languages": list(self.model.languages),
        }
        program = {
            "name": "voxdesk",
            "attribution": {"name": "Voxdesk", "url": ""},
            "installed": True,
            "description": "Voxdesk streaming speech-to-text",
            "version": self.version,
            "models": [model],
            "supports_transcript_streaming": True,
        }
        return Event("info", {kind: [program] if kind == "asr" else [] for kind in _KINDS})


def parse_asr_programs(event: Event) -> list[AsrProgram]:
    """The ASR programs of an ``info`` event, in the server's order.

    Raises:
        WyomingProtocolError: ``info`` without a well-formed ``asr`` list.
    """
    try:
        return [_program(program) for program in event.data.get("asr") or []]
    except (KeyError, TypeError, AttributeError) as exc:
        raise WyomingProtocolError(WireCode.INVALID_EVENT, f"malformed info event: {exc!r}") from None


def _program(data: dict[str, Any]) -> AsrProgram:
    models = tuple(
        AsrModel(str(m["name"]), tuple(str(code) for code in m["languages"]), bool(m["installed"]))
        for m in data["models"]
    )
    streaming = bool(data.get("supports_transcript_streaming", False))
    return AsrProgram(str(data["name"]), models, bool(data["installed"]), streaming)
