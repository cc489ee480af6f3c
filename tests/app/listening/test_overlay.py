"""What the dictation overlay shows, from the events a dictation produces."""

from __future__ import annotations

from voxdesk.app.actions.center import ActionRecord, ActionStatus
from voxdesk.app.actions.kinds import Action
from voxdesk.app.listening.events import ListeningChanged, ListenTrigger, TranscriptChanged
from voxdesk.app.listening.overlay import OverlayFeed, OverlayState
from voxdesk.app.listening.transcript import Utterance


def record(utterance_id: int, status: ActionStatus, message: str = "") -> ActionRecord:
    return ActionRecord(
        1, "search", Action.SEARCH, {"query": "cats"}, "search for cats", "Search for cats.", utterance_id,
        "phrase", False, status, 0.0, message=message,
    )  # fmt: skip


def test_only_shortcut_or_hold_started_listening_opens_it_and_the_setting_turns_it_off() -> None:
    enabled = True
    feed = OverlayFeed(lambda: enabled)
    feed.on_event(ListeningChanged(True))
    assert not feed.state.shown
    feed.on_event(ListeningChanged(False))
    feed.on_event(ListeningChanged(True, trigger=ListenTrigger.GLOBAL_SHORTCUT))
    assert feed.state == OverlayState(shown=True)
    feed.on_event(ListeningChanged(False))
    feed.on_event(ListeningChanged(True, True, ListenTrigger.HOLD_TO_TALK))
    assert feed.state.shown
    enabled = False
    feed.on_event(ListeningChanged(False))
    feed.on_event(ListeningChanged(True, trigger=ListenTrigger.GLOBAL_SHORTCUT))
    assert not feed.state.shown


def test_text_then_action_then_fade_once_stopped_and_final() -> None:
    feed = OverlayFeed(lambda: True)
    feed.on_event(ListeningChanged(True, True, ListenTrigger.HOLD_TO_TALK))
    assert feed.on_event(TranscriptChanged(Utterance(4, committed="Search", provisional="for ca")))
    assert (feed.state.committed, feed.state.provisional) == ("Search", "for ca")
    feed.on_event(ListeningChanged(False))  # key released mid-utterance: wait for its final
    assert not feed.state.fade
    feed.on_event(TranscriptChanged(Utterance(4, committed="Search for cats.", final=True)))
    assert feed.state.fade and feed.state.committed == "Search for cats."
    assert not feed.on_record(record(3, ActionStatus.DONE))  # another utterance's action
    assert feed.on_record(record(4, ActionStatus.DONE, "opened https://duckduckgo.com/?q=cats"))
    assert feed.state.action == "search (query: cats) — done: opened https://duckduckgo.com/?q=cats"
