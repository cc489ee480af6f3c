"""Transcripts as TXT, SRT, WebVTT or JSON, from a session or from search hits.

Cue times are the utterances' audio times within their session. Search hits come from many
sessions, so their cues keep their own session's times and are listed oldest session first;
their TXT lines and VTT cue identifiers say which session each one is from.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from voxdesk.app.history.records import SearchHit, SessionRecord, UtteranceRecord
from voxdesk.engine.errors import VoxdeskError

__all__ = [
    "FORMATS",
    "ExportError",
    "export_hits",
    "export_session",
    "format_for_path",
    "parse_format",
    "srt_time",
    "vtt_time",
]

FORMATS = ("txt", "srt", "vtt", "json")
_MIN_CUE_SECONDS = 0.001


class ExportError(VoxdeskError):
    """An export format that does not exist or cannot be inferred."""


def parse_format(name: str) -> str:
    """A format name (``"srt"``, ``".SRT"``…) as one of :data:`FORMATS`."""
    format_ = name.lower().lstrip(".")
    if format_ not in FORMATS:
        raise ExportError(f"unknown export format {name!r}; choose one of: {', '.join(FORMATS)}")
    return format_


def format_for_path(path: Path | str) -> str:
    """The format a file name asks for by its extension (``notes.srt`` → ``"srt"``)."""
    suffix = Path(path).suffix
    if not suffix:
        raise ExportError(f"cannot tell the export format of {str(path)!r}: name it .txt, .srt, .vtt or .json")
    try:
        return parse_format(suffix)
    except ExportError:
        raise ExportError(f"cannot export to {str(path)!r}: name it .txt, .srt, .vtt or .json") from None


def export_session(session: SessionRecord, utterances: Sequence[UtteranceRecord], format_: str) -> str:
    """One session's transcript in ``format_`` (one of :data:`FORMATS`)."""
    format_ = parse_format(format_)
    if format_ == "json":
        payload = {"session": _session_json(session), "utterances": [_utterance_json(u) for u in utterances]}
        return json.dumps(payload, ensure_ascii=False, indent=2) + "\n"
    cues = [_Cue(u, None) for u in utterances]
    return _TEXT_WRITERS[format_](cues)


def export_hits(hits: Sequence[SearchHit], format_: str) -> str:
    """Search hits in ``format_``, oldest session first, each session's hits in spoken order."""
    format_ = parse_format(format_)
    ordered = sorted(hits, key=lambda h: (h.session.started_at, h.session.id, h.utterance.start_s, h.utterance.id))
    if format_ == "json":
        payload = {
            "hits": [{"session": _session_json(h.session), "utterance": _utterance_json(h.utterance)} for h in ordered]
        }
        return json.dumps(payload, ensure_ascii=False, indent=2) + "\n"
    return _TEXT_WRITERS[format_]([_Cue(h.utterance, h.session) for h in ordered])


@dataclass(frozen=True)
class _Cue:
    utterance: UtteranceRecord
    session: SessionRecord | None  # set for search hits: whose session times these are

    @property
    def text(self) -> str:
        # A blank line ends a cue in SRT and VTT; keep each utterance on one line.
        return " ".join(self.utterance.text.split())

    @property
    def start(self) -> float:
        return max(0.0, self.utterance.start_s)

    @property
    def end(self) -> float:
        return max(self.start + _MIN_CUE_SECONDS, self.utterance.end_s)


def _clock(seconds: float, separator: str) -> str:
    milliseconds = max(0, round(seconds * 1000))
    hours, rest = divmod(milliseconds, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    whole, millis = divmod(rest, 1000)
    return f"{hours:02d}:{minutes:02d}:{whole:02d}{separator}{millis:03d}"


def srt_time(seconds: float) -> str:
    """``HH:MM:SS,mmm``."""
    return _clock(seconds, ",")


def vtt_time(seconds: float) -> str:
    """``HH:MM:SS.mmm``."""
    return _clock(seconds, ".")


def _session_label(session: SessionRecord) -> str:
    return f"session {session.id}, {_local(session.started_at)}"


def _local(moment: datetime) -> str:
    return moment.astimezone().strftime("%Y-%m-%d %H:%M")


def _txt(cues: Iterable[_Cue]) -> str:
    lines = []
    for cue in cues:
        if cue.session is None:
            lines.append(cue.text)
        else:
            lines.append(f"[{_session_label(cue.session)}, {vtt_time(cue.start)}] {cue.text}")
    return "".join(line + "\n" for line in lines)


def _srt(cues: Iterable[_Cue]) -> str:
    blocks = []
    for number, cue in enumerate((c for c in cues if c.text), start=1):
        blocks.append(f"{number}\n{srt_time(cue.start)} --> {srt_time(cue.end)}\n{cue.text}\n")
    return "\n".join(blocks)


def _vtt_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _vtt(cues: Iterable[_Cue]) -> str:
    blocks = ["WEBVTT\n"]
    for cue in cues:
        if not cue.text:
            continue
        identifier = "" if cue.session is None else f"{_session_label(cue.session)}\n".replace("-->", "->")
        blocks.append(f"{identifier}{vtt_time(cue.start)} --> {vtt_time(cue.end)}\n{_vtt_escape(cue.text)}\n")
    return "\n".join(blocks)


_TEXT_WRITERS = {"txt": _txt, "srt": _srt, "vtt": _vtt}


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


def _session_json(session: SessionRecord) -> dict[str, Any]:
    return {
        "id": session.id,
        "started_at": _iso(session.started_at),
        "ended_at": _iso(session.ended_at),
        "kind": session.kind,
        "engine": session.engine,
        "model": session.model,
        "source": session.source,
    }


def _utterance_json(utterance: UtteranceRecord) -> dict[str, Any]:
    return {
        "id": utterance.id,
        "text": utterance.text,
        "start_s": round(utterance.start_s, 3),
        "end_s": round(utterance.end_s, 3),
        "first_partial_latency_s": utterance.first_partial_latency_s,
        "final_latency_s": utterance.final_latency_s,
        "action": utterance.action,
        "language": utterance.language,
        "created_at": _iso(utterance.created_at),
    }
