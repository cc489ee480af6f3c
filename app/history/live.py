"""Writes each listening session of the controller into the history store as it happens."""

from __future__ import annotations

import logging
from collections.abc import Callable

from voxdesk.app.engines import describe_engine, model_name
from voxdesk.app.history.store import NOT_RECORDED, HistoryError, HistoryStore
from voxdesk.app.listening.capture import STALL_SECONDS
from voxdesk.app.listening.controller import Controller
from voxdesk.app.listening.events import ControllerEvent, ListeningChanged, Problem, UtteranceFinal

__all__ = ["LOCK_WAIT_S", "LiveHistory"]

logger = logging.getLogger("voxdesk.history")

LOCK_WAIT_S = STALL_SECONDS / 4
"""The longest a live write waits for another connection's lock (a commit takes milliseconds)."""


class LiveHistory:
    """A ``'live'`` session per listening session; each final utterance committed at once.

    Finals that arrive just after listening stops (the utterance in progress) still go to
    the session that heard them. ``utterance_ids`` maps transcript ids to history rows, so
    an action can be noted on its utterance later.

    A write that fails (a full disk, a lock another program holds too long, a file damaged
    meanwhile) is reported once as a :class:`Problem`; the rest of that listening session is not
    written, so a failing disk neither floods the window nor stalls listening on each utterance.
    What was saved before stays saved, and the next listening session tries again.

    Writes run on the event loop, so the store waits at most :data:`LOCK_WAIT_S` for another
    connection's lock: capture takes a second without audio for a lost microphone.
    """

    def __init__(self, controller: Controller, store: HistoryStore) -> None:
        self.store = store
        store.wait_for_locks(LOCK_WAIT_S)
        self._controller = controller
        self._session = NOT_RECORDED
        self._saving = True
        self.utterance_ids: dict[int, int] = {}
        self.unsubscribe = controller.subscribe(self._on_event)

    def _on_event(self, event: ControllerEvent) -> None:
        if isinstance(event, ListeningChanged) and event.listening:
            self._session, self._saving = NOT_RECORDED, True
            settings = self._controller.settings
            engine, device = describe_engine(settings.engine), settings.audio.device or "default"
            self._save(lambda: self._start(engine, model_name(settings.engine), device))
        elif isinstance(event, ListeningChanged):
            self._save(lambda: self.store.end_session(self._session))
        elif isinstance(event, UtteranceFinal):
            utterance = event.utterance

            def add() -> None:
                self.utterance_ids[utterance.id] = self.store.add_utterance(
                    self._session,
                    utterance.committed,
                    utterance.start or 0.0,
                    utterance.end or 0.0,
                    first_partial_latency_s=utterance.first_partial_latency,
                    final_latency_s=utterance.final_latency,
                    language=utterance.language,
                )

            self._save(add)

    def _start(self, engine: str, model: str, device: str) -> None:
        self._session = self.store.start_session("live", engine, model, device)

    def note_action(self, transcript_id: int, action: str) -> None:
        """Record on an utterance what it made Voxdesk do."""
        row = self.utterance_ids.get(transcript_id)
        if row is not None:
            self._save(lambda: self.store.set_action(row, action))

    def _save(self, write: Callable[[], None]) -> None:
        if not self._saving:
            return
        try:
            write()
        except HistoryError as exc:
            self._saving = False
            message = (
                f"could not save to the history ({exc}); the rest of this listening session is in the transcript only"
            )
            logger.warning("%s", message)
            self._controller.report(Problem(message))
