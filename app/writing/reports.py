"""A transcription's report with each utterance's final text written by a mode."""

from __future__ import annotations

import dataclasses

from voxdesk.app.files.transcription import TranscriptionReport
from voxdesk.app.writing.modes import Mode
from voxdesk.app.writing.pipeline import write_text

__all__ = ["written_report"]


def written_report(report: TranscriptionReport, mode: Mode) -> TranscriptionReport:
    """``report`` with each utterance's final text as ``mode`` writes it; its timeline (the
    engine's own events) is left as it was."""
    utterances = [
        dataclasses.replace(u, done=dataclasses.replace(u.done, text=write_text(u.done.text, mode)))
        for u in report.utterances
    ]
    return dataclasses.replace(report, utterances=utterances)
