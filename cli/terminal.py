"""Showing a transcription in a terminal: live text, JSON lines, and the closing summary."""

from __future__ import annotations

import dataclasses
import json
import shutil
from typing import Any, TextIO

from voxdesk.app.files.transcription import TimedEvent, TranscriptionReport
from voxdesk.engine.events import EngineEvent, ProvisionalText, StreamError, TextDelta, UtteranceDone

__all__ = ["LiveTranscriptPrinter", "event_to_json", "print_summary"]

_EVENT_TYPES: dict[type, str] = {
    TextDelta: "delta",
    ProvisionalText: "provisional",
    UtteranceDone: "done",
    StreamError: "error",
}
_DIM, _RESET, _CLEAR_LINE = "\x1b[2m", "\x1b[0m", "\r\x1b[K"


def event_to_json(timed: TimedEvent) -> str:
    """One compact JSON object: the event's fields, its ``type`` and ``wall_time``."""
    fields: dict[str, Any] = {"type": _EVENT_TYPES[type(timed.event)]}
    fields.update(dataclasses.asdict(timed.event))
    fields["wall_time"] = round(timed.wall_time, 4)
    return json.dumps(fields, separators=(",", ":"))


class LiveTranscriptPrinter:
    """Prints committed text and the provisional tail as they change.

    On a terminal the current utterance is redrawn in place, the provisional tail dimmed;
    elsewhere only finished utterances are printed, one per line.
    """

    def __init__(self, out: TextIO, interactive: bool) -> None:
        self._out = out
        self._interactive = interactive
        self._committed = ""
        self._tail = ""

    def __call__(self, timed: TimedEvent) -> None:
        event: EngineEvent = timed.event
        if isinstance(event, TextDelta):
            self._committed += event.text
        elif isinstance(event, ProvisionalText):
            self._tail = event.text
        elif isinstance(event, UtteranceDone):
            self._committed = self._tail = ""
            if event.text:
                self._write_line(f"[{event.speech_start:7.2f} → {event.speech_end:7.2f}] {event.text}")
            return
        elif isinstance(event, StreamError):
            self._write_line(f"engine error ({event.code}): {event.message}")
            return
        if self._interactive:
            width = max(20, shutil.get_terminal_size().columns - 1)
            visible = (self._committed + self._tail)[-width:]
            split = max(0, len(visible) - len(self._tail))
            self._out.write(f"{_CLEAR_LINE}{visible[:split]}{_DIM}{visible[split:]}{_RESET}")
            self._out.flush()

    def _write_line(self, line: str) -> None:
        self._out.write((_CLEAR_LINE if self._interactive else "") + line + "\n")
        self._out.flush()


def print_summary(report: TranscriptionReport, out: TextIO) -> None:
    """The final transcript and the latency and speed figures, for people."""
    stats = report.summary()

    def figure(key: str, unit: str = " s") -> str:
        value = stats[key]
        return "n/a" if value is None else f"{value:.2f}{unit}"

    out.write("\nTranscript:\n" + (report.text or "(no speech found)") + "\n\n")
    out.write(
        f"Audio {stats['audio_seconds']:.1f} s, {stats['utterances']} utterance(s)\n"
        f"First partial after speech onset: median {figure('first_partial_latency_median_s')}, "
        f"p90 {figure('first_partial_latency_p90_s')}\n"
        f"Final after end of speech:       median {figure('final_latency_median_s')}, "
        f"p90 {figure('final_latency_p90_s')}\n"
        f"Real-time factor {figure('real_time_factor', '')} (decoding), "
        f"{stats['wall_real_time_factor']:.2f} (wall); "
        f"{stats['cpu_seconds_per_audio_second']:.2f} CPU-s per audio-s\n"
    )
