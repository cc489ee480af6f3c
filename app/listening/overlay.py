"""What the dictation overlay shows, decided from controller events and action records. Qt-free.

The overlay is for dictating into another application: it opens when listening was started by
the system-wide shortcut or hold-to-talk (and the setting is on), follows the newest utterance
and its action, and fades once listening has stopped and the last utterance is final.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from voxdesk.app.actions.center import ActionRecord
from voxdesk.app.actions.summary import action_line
from voxdesk.app.listening.events import ControllerEvent, ListeningChanged, ListenTrigger, TranscriptChanged

__all__ = ["OverlayFeed", "OverlayState"]


@dataclass(frozen=True)
class OverlayState:
    """One frame of the overlay."""

    shown: bool = False
    committed: str = ""
    provisional: str = ""
    action: str = ""  # the newest utterance's action, in one line
    fade: bool = False  # listening stopped and nothing is left to finish: fade out


class OverlayFeed:
    """Feed it every controller event and action record; :attr:`state` is what to show.

    ``enabled`` is asked each time listening starts (the setting can change at run time).
    """

    def __init__(self, enabled: Callable[[], bool]) -> None:
        self._enabled = enabled
        self.state = OverlayState()
        self._listening = False
        self._open: set[int] = set()  # utterances still waiting for their final text
        self._utterance: int | None = None

    def on_event(self, event: ControllerEvent) -> bool:
        """Take one event; True when the state changed."""
        before = self.state
        if isinstance(event, ListeningChanged):
            self._listening_changed(event)
        elif isinstance(event, TranscriptChanged) and self.state.shown:
            utterance = event.utterance
            if utterance.final:
                self._open.discard(utterance.id)
            else:
                self._open.add(utterance.id)
            action = self.state.action if utterance.id == self._utterance else ""
            self._utterance = utterance.id
            committed, provisional = utterance.committed.strip(), utterance.provisional.strip()
            self.state = replace(self.state, committed=committed, provisional=provisional, action=action)
            self._maybe_fade()
        return self.state != before

    def on_record(self, record: ActionRecord) -> bool:
        """Take one action record; True when the state changed."""
        if not self.state.shown or record.utterance_id != self._utterance:
            return False
        before = self.state
        self.state = replace(self.state, action=action_line(record))
        return self.state != before

    def _listening_changed(self, event: ListeningChanged) -> None:
        self._listening = event.listening
        if event.listening:
            shown = event.trigger is not ListenTrigger.WINDOW and self._enabled()
            self._open.clear()
            self._utterance = None
            self.state = OverlayState(shown=shown)
        else:
            self._maybe_fade()

    def _maybe_fade(self) -> None:
        if self.state.shown and not self._listening and not self._open:
            self.state = replace(self.state, fade=True)
