"""Showing a transcription in a terminal: live text, a progress bar, JSON lines, and the closing summary."""

from __future__ import annotations

import dataclasses
import json
import shutil
from typing import Any, Protocol, TextIO

from tqdm import tqdm

from voxdesk.app.files.job import FileProgress
from voxdesk.app.files.transcription import TimedEvent, TranscriptionReport
from voxdesk.engine.events import EngineEvent, ProvisionalText, StreamError, TextDelta, TextRetracted, UtteranceDone

__all__ = ["LiveTranscriptPrinter", "ProgressBar", "Writer", "event_to_json", "print_summary"]

_EVENT_TYPES: dict[type, str] = {
    TextDelta: "delta",
    ProvisionalText: "provisional",
    TextRetracted: "retracted",
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


class Writer(Protocol):
    """Where text goes: a stream, or a :class:`ProgressBar` that prints above itself."""

    def write(self, text: str, /) -> int | None: ...

    def flush(self) -> None: ...


class LiveTranscriptPrinter:
    """Prints committed text and the provisional tail as they change.

    On a terminal the current utterance is redrawn in place, the provisional tail dimmed;
    elsewhere only finished utterances are printed, one per line.
    """

    def __init__(self, out: Writer, interactive: bool) -> None:
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
        elif isinstance(event, TextRetracted):
            self._committed = self._tail = ""
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


class ProgressBar:
    """Audio position / duration, x real time and time left, on a terminal (tqdm); elsewhere nothing.

    Lines written through it appear above the bar.
    """

    def __init__(self, out: TextIO, label: str, enabled: bool) -> None:
        self._out = out
        self._bar: tqdm[Any] | None = None
        if enabled:
            size = shutil.get_terminal_size()  # a fresh pty may say 0 x 0, which tqdm takes as no room
            self._bar = tqdm(
                total=1.0,
                file=out,
                desc=label,
                bar_format="{desc} {percentage:3.0f}%|{bar}| {postfix}",
                ncols=max(40, size.columns - 1),
                nrows=max(2, size.lines),
                leave=False,
            )

    def __call__(self, progress: FileProgress) -> None:
        if self._bar is None:
            return
        speed, left = progress.speed, progress.remaining
        self._bar.set_postfix_str(
            f"{clock(progress.position)} / {clock(progress.duration)}, "
            + ("…" if speed is None else f"{speed:.1f}x real time, {clock(left or 0.0)} left"),
            refresh=False,
        )
        self._bar.n = progress.fraction
        self._bar.refresh()

    def write(self, text: str, /) -> int:
        if self._bar is None:
            return self._out.write(text)
        if text.strip("\r\x1b[K\n"):
            self._bar.write(text.rstrip("\n").lstrip("\r"), file=self._out)
        return len(text)

    def flush(self) -> None:
        self._out.flush()

    def close(self) -> None:
        """Remove the bar."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def clock(seconds: float) -> str:
    """``m:ss`` (or ``h:mm:ss``) for a duration."""
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def print_summary(report: TranscriptionReport, out: TextIO) -> None:
    """The final transcript and the speed figures, for people; latencies when it was streamed."""
    stats = report.summary()

    def figure(key: str, unit: str = " s") -> str:
        value = stats[key]
        return "n/a" if value is None else f"{value:.2f}{unit}"

    out.write("\nTranscript:\n" + (report.text or "(no speech found)") + "\n\n")
    out.write(f"Audio {stats['audio_seconds']:.1f} s, {stats['utterances']} utterance(s)\n")
    if report.partial:
        out.write(
            f"Stopped after {clock(report.transcribed_seconds)} of {clock(report.audio_seconds)}: partial transcript\n"
        )
    out.write(f"Speed {report.speed:.1f}x real time ({report.wall_seconds:.1f} s)\n")
    if not any(u.final_latency is not None for u in report.utterances):
        return  # decoded as a whole file: there are no live latencies to show
    out.write(
        f"First partial after speech onset: median {figure('first_partial_latency_median_s')}, "
        f"p90 {figure('first_partial_latency_p90_s')}\n"
        f"Final after end of speech:       median {figure('final_latency_median_s')}, "
        f"p90 {figure('final_latency_p90_s')}\n"
        f"Real-time factor {figure('real_time_factor', '')} (decoding), "
        f"{stats['wall_real_time_factor']:.2f} (wall); "
        f"{stats['cpu_seconds_per_audio_second']:.2f} CPU-s per audio-s\n"
    )
