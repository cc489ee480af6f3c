"""Turning a finished file transcription into history rows and transcript files."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

from voxdesk.app.files.transcription import TranscriptionReport
from voxdesk.app.history.export import export_session
from voxdesk.app.history.records import SessionRecord, UtteranceRecord
from voxdesk.app.history.store import NOT_RECORDED, HistoryStore

__all__ = ["record_report", "report_session", "write_transcript"]


def record_report(store: HistoryStore, report: TranscriptionReport, *, engine: str, model: str, source: str) -> int:
    """Record a transcribed file as a ``'file'`` session with its non-empty utterances; its id.

    A partial report (stopped before the end of the file) is left without an end time
    (``ended_at`` NULL), which is how the history marks a file transcription that did not finish.
    Returns :data:`~voxdesk.app.history.store.NOT_RECORDED` when the store keeps no history.
    """
    session_id = store.start_session("file", engine, model, source)
    for item in report.utterances:
        if item.done.text:
            store.add_utterance(
                session_id,
                item.done.text,
                item.done.speech_start,
                item.done.speech_end,
                first_partial_latency_s=item.first_text_latency,
                final_latency_s=item.final_latency,
                language=item.done.language,
            )
    if not report.partial:
        store.end_session(session_id)
    return session_id


def report_session(
    report: TranscriptionReport, *, engine: str, model: str, source: str, session_id: int = NOT_RECORDED
) -> tuple[SessionRecord, list[UtteranceRecord]]:
    """The session and utterances a report amounts to, without a store (for exporting it directly)."""
    now = datetime.fromtimestamp(time.time(), UTC)
    session = SessionRecord(session_id, now, None if report.partial else now, "file", engine, model, source)
    utterances = [
        UtteranceRecord(
            number,
            session_id,
            item.done.text,
            item.done.speech_start,
            item.done.speech_end,
            item.first_text_latency,
            item.final_latency,
            None,
            now,
            item.done.language,
        )
        for number, item in enumerate((u for u in report.utterances if u.done.text), start=1)
    ]
    return session, utterances


def write_transcript(path: Path, session: SessionRecord, utterances: list[UtteranceRecord], format_: str) -> None:
    """Write a transcript file in ``format_``."""
    path.write_text(export_session(session, utterances, format_), encoding="utf-8")
