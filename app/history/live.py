"""Writes each listening session of the controller into the history store as it happens."""

from __future__ import annotations

import logging

from voxdesk.app.engines import describe_engine, model_name
from voxdesk.app.history.store import NOT_RECORDED, HistoryError, HistoryStore
from voxdesk.app.listening.controller import Controller
from voxdesk.app.listening.events import ControllerEvent, ListeningChanged, Problem, UtteranceFinal

__all__ = ["LiveHistory"]

logger = logging.getLogger("voxdesk.history")


class LiveHistory:
    """A ``'live'`` session per listening session; each final utterance committed at once.

    Finals that arrive just after listening stops (the utterance in progress) still go to
    the session that heard them. ``utterance_ids`` maps transcript ids to history rows, so
    an action can be noted on its utterance later.
    """

    def __init__(self, controller: Controller, store: HistoryStore) -> None:
        self.store = store
        self._controller = controller
        self._session = NOT_RECORDED
        self.utterance_ids: dict[int, int] = {}
        self.unsubscribe = controller.subscribe(self._on_event)

    def _on_event(self, event: ControllerEvent) -> None:
        try:
            if isinstance(event, ListeningChanged) and event.listening:
                settings = self._controller.settings
                engine, device = describe_engine(settings.engine), settings.audio.device or "default"
                self._session = self.store.start_session("live", engine, model_name(settings.engine), device)
            elif isinstance(event, ListeningChanged):
                self.store.end_session(self._session)
            elif isinstance(event, UtteranceFinal):
                utterance = event.utterance
                self.utterance_ids[utterance.id] = self.store.add_utterance(
                    self._session,
                    utterance.committed,
                    utterance.start or 0.0,
                    utterance.end or 0.0,
                    first_partial_latency_s=utterance.first_partial_latency,
                    final_latency_s=utterance.final_latency,
                    language=utterance.language,
                )
        except HistoryError as exc:
            logger.warning("history: %s", exc)
            self._controller.report(Problem(f"could not save to the history: {exc}"))

    def note_action(self, transcript_id: int, action: str) -> None:
        """Record on an utterance what it made Voxdesk do."""
        row = self.utterance_ids.get(transcript_id)
        if row is not None:
            self.store.set_action(row, action)
