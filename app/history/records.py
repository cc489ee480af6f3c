"""The rows of the history as values: stored sessions, their utterances and search hits.

These are what the history holds, not the live objects of a listening session (compare
:class:`~voxdesk.app.listening.transcript.Utterance` and :class:`~voxdesk.app.listening.session.ListeningSession`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

__all__ = ["SearchHit", "SessionKind", "SessionRecord", "SessionSummary", "UtteranceRecord"]

SessionKind = Literal["live", "file"]


@dataclass(frozen=True)
class SessionRecord:
    """One recorded session: a live listening session or one transcribed file."""

    id: int
    started_at: datetime  # UTC
    ended_at: datetime | None  # None while running, or if the app stopped without ending it
    kind: str
    engine: str
    model: str
    source: str

    @property
    def partial(self) -> bool:
        """A file transcription stopped before its end: it is kept without an end time."""
        return self.kind == "file" and self.ended_at is None


@dataclass(frozen=True)
class SessionSummary(SessionRecord):
    """A recorded session with how many utterances it holds and the start of its text."""

    utterance_count: int
    preview: str


@dataclass(frozen=True)
class UtteranceRecord:
    """One recorded final utterance; ``start_s``/``end_s`` are audio times within its session."""

    id: int
    session_id: int
    text: str
    start_s: float
    end_s: float
    first_partial_latency_s: float | None
    final_latency_s: float | None
    action: str | None
    created_at: datetime  # UTC
    language: str | None = None  # the Whisper language code it was decoded in, where known


@dataclass(frozen=True)
class SearchHit:
    """A recorded utterance that matched a search, and the session it belongs to."""

    utterance: UtteranceRecord
    session: SessionRecord
