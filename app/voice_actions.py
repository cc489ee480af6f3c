"""Joins the controller to the action center: each final utterance becomes an action (or not),
one at a time in the order spoken, and what it did is noted on its history row."""

from __future__ import annotations

import asyncio
import logging

from voxdesk.app.actions import ActionCenter, ActionRecord
from voxdesk.app.history.live import LiveHistory
from voxdesk.app.listening.controller import Controller
from voxdesk.app.listening.events import ControllerEvent, Problem, TranscriptChanged, UtteranceFinal
from voxdesk.app.listening.transcript import Utterance

__all__ = ["VoiceActions"]

logger = logging.getLogger("voxdesk.actions")


class VoiceActions:
    """Feeds final utterances to ``center``; notes each action's outcome in ``history``."""

    def __init__(self, controller: Controller, center: ActionCenter, history: LiveHistory | None = None) -> None:
        self.center = center
        self._controller = controller
        self._history = history
        self._waiting: asyncio.Queue[Utterance] = asyncio.Queue()
        self._worker: asyncio.Task[None] | None = None
        self.unsubscribe = controller.subscribe(self._on_event)
        self._forget_records = center.add_record_listener(self._on_record)

    def _on_event(self, event: ControllerEvent) -> None:
        if isinstance(event, TranscriptChanged):
            self.center.transcript_changed(event.utterance)
        if isinstance(event, UtteranceFinal):  # an empty one too: what it typed live is taken back
            self._waiting.put_nowait(event.utterance)
            if self._worker is None or self._worker.done():
                self._worker = asyncio.ensure_future(self._work())

    async def _work(self) -> None:
        while not self._waiting.empty():
            utterance = self._waiting.get_nowait()
            try:
                await self.center.handle_utterance(utterance.committed, utterance.id)
            except Exception as exc:  # the center reports failures itself; this is a bug
                logger.exception("action center failed")
                self._controller.report(Problem(f"the action for {utterance.committed!r} failed: {exc}"))

    def _on_record(self, record: ActionRecord) -> None:
        if self._history is not None and record.utterance_id is not None:
            self._history.note_action(record.utterance_id, f"{record.preview} ({record.status})")

    async def aclose(self) -> None:
        """Stop taking utterances and let the one in progress finish, its outcome noted in the history."""
        self.unsubscribe()
        if self._worker is not None:
            await asyncio.gather(self._worker, return_exceptions=True)
        self._forget_records()
        self.center.close()
