"""Sample history shared by the history tests."""

from __future__ import annotations

from voxdesk.app.history.store import HistoryStore


def record_two_sessions(store: HistoryStore) -> tuple[int, int]:
    """A finished file session about the weather and a live one with a command; their ids."""
    weather = store.start_session("file", "builtin", "whisper-tiny.en", "/recordings/weather.wav")
    store.add_utterance(weather, "The weather today is sunny.", 0.5, 2.25)
    store.add_utterance(weather, "Tomorrow it will rain.", 3.5, 5.0)
    store.end_session(weather)
    live = store.start_session("live", "builtin", "whisper-tiny.en", "USB microphone")
    store.add_utterance(live, "Open the browser.", 1.0, 2.0)
    return weather, live
