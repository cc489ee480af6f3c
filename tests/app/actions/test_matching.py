"""The utterance table: what each final utterance should become, with the default commands.

Threshold 85 (``DEFAULT_THRESHOLD``): ASR slips like "opened the browser" (94), "search four
cats" (95) and "set a time for five minutes" (97) pass; near misses such as "the search for
meaning is long" (83) and "I opened the door yesterday" (67) do not.
"""

from __future__ import annotations

from typing import Any

import pytest
from rapidfuzz import fuzz

from voxdesk.app.actions.commands import CommandSource
from voxdesk.app.actions.matching import (
    DEFAULT_THRESHOLD,
    match_utterance,
    parse_number,
    strip_wake_phrase,
    tokenize,
)

N = None  # no match
TABLE: list[tuple[str, str, str | None, dict[str, Any]]] = [
    # (utterance, wake phrase, expected command, expected slots)
    ("open the browser", "", "open_browser", {}),
    ("Open the browser.", "", "open_browser", {}),
    ("opened the browser", "", "open_browser", {}),
    ("open a browser please", "", "open_browser", {}),
    ("um, open the web browser", "", "open_browser", {}),
    ("launch the browser", "", "open_browser", {}),
    ("open the terminal", "", "open_app", {"app": "the terminal"}),
    ("Open Firefox.", "", "open_app", {"app": "Firefox"}),
    ("could you launch text editor", "", "open_app", {"app": "text editor"}),
    ("open website example.com", "", "open_website", {"url": "example.com"}),
    ("Open the website python dot org.", "", "open_website", {"url": "python dot org"}),
    ("go to website github.com/openai", "", "open_website", {"url": "github.com/openai"}),
    ("search for cats", "", "search", {"query": "cats"}),
    ("search four cats", "", "search", {"query": "cats"}),
    ("Search for the best pizza in Rome.", "", "search", {"query": "the best pizza in Rome"}),
    ("search the web for 5 easy recipes", "", "search", {"query": "5 easy recipes"}),
    ("look up the capital of France", "", "search", {"query": "the capital of France"}),
    ("google weather tomorrow", "", "search", {"query": "weather tomorrow"}),
    ("type Hello, world.", "", "type_text", {"text": "Hello, world"}),
    ("type hello world", "", "type_text", {"text": "hello world"}),
    ("typed hello world", "", "type_text", {"text": "hello world"}),
    ("write Dear Sir", "", "type_text", {"text": "Dear Sir"}),
    ("press control a", "", "press_keys", {"keys": "ctrl+a"}),
    ("press ctrl+shift+t", "", "press_keys", {"keys": "ctrl+shift+t"}),
    ("Press Enter.", "", "press_keys", {"keys": "Return"}),
    ("hit alt tab", "", "press_keys", {"keys": "alt+Tab"}),
    ("press F5", "", "press_keys", {"keys": "F5"}),
    ("copy that", "", "copy_that", {}),
    ("Copy that.", "", "copy_that", {}),
    ("copy my email address", "", "copy_text", {"text": "my email address"}),
    ("set a timer for five minutes", "", "timer", {"n": 5, "unit": "minutes"}),
    ("Set a timer for 5 minutes.", "", "timer", {"n": 5, "unit": "minutes"}),
    ("set a time for five minutes", "", "timer", {"n": 5, "unit": "minutes"}),
    ("set a timer for twenty-five seconds", "", "timer", {"n": 25, "unit": "seconds"}),
    ("set a timer for 90 seconds", "", "timer", {"n": 90, "unit": "seconds"}),
    ("set a timer for an hour", "", "timer", {"n": 1, "unit": "hours"}),
    ("set a timer for one minute", "", "timer", {"n": 1, "unit": "minutes"}),
    ("start a 10 min timer", "", "timer", {"n": 10, "unit": "minutes"}),
    ("timer for two hours", "", "timer", {"n": 2, "unit": "hours"}),
    ("stop listening", "", "stop_listening", {}),
    ("Stop listening.", "", "stop_listening", {}),
    ("scratch that", "", "scratch_that", {}),
    ("Scratch that!", "", "scratch_that", {}),
    ("switch to dictation mode", "", "dictation_mode", {}),
    ("switch to dictation mod", "", "dictation_mode", {}),
    ("switch to command mode", "", "command_mode", {}),
    ("command mode", "", "command_mode", {}),
    # wake phrase
    ("Computer, open the browser.", "computer", "open_browser", {}),
    ("computers open the browser", "computer", "open_browser", {}),
    ("open the browser", "computer", N, {}),
    ("hey vox desk search for cats", "hey voxdesk", "search", {"query": "cats"}),
    ("hey voxdesk, set a timer for 3 minutes", "hey voxdesk", "timer", {"n": 3, "unit": "minutes"}),
    ("I was telling the computer to open", "computer", N, {}),
    # near misses that must not match
    ("I opened the door yesterday", "", N, {}),
    ("the search for meaning is long", "", N, {}),
    ("press conference tomorrow at noon", "", N, {}),
    ("what's the weather like", "", N, {}),
    ("I need to type this report", "", N, {}),
    ("we should set a time for the meeting", "", N, {}),
    ("the timer was broken", "", N, {}),
    ("stop it", "", N, {}),
    ("hello there", "", N, {}),
    ("opened notes", "", N, {}),
    ("um", "", N, {}),
    ("", "", N, {}),
]


@pytest.mark.parametrize(("utterance", "wake", "command", "slots"), TABLE)
def test_utterance_table(
    command_source: CommandSource, utterance: str, wake: str, command: str | None, slots: dict[str, Any]
) -> None:
    addressed = strip_wake_phrase(utterance, wake)
    found = None if addressed is None else match_utterance(addressed, command_source.commands())
    if command is None:
        assert found is None, f"{utterance!r} matched {found.command.name} {found.slots} ({found.score:.1f})"
    else:
        assert found is not None, f"{utterance!r} did not match"
        assert (found.command.name, found.slots) == (command, slots)
        assert found.score >= DEFAULT_THRESHOLD


def test_table_is_large_enough() -> None:
    assert len(TABLE) >= 50
    assert sum(1 for row in TABLE if row[2] is None) >= 10


def test_threshold_separates_slips_from_near_misses() -> None:
    assert fuzz.ratio("open the browser", "opened the browser") >= DEFAULT_THRESHOLD
    assert fuzz.ratio("search for", "search four") >= DEFAULT_THRESHOLD
    assert fuzz.ratio("search for", "the search for") < DEFAULT_THRESHOLD


@pytest.mark.parametrize(
    ("words", "value"),
    [("five", 5), ("5", 5), ("twenty five", 25), ("one hundred twenty", 120), ("2.5", 2.5), ("a", 1)],
)
def test_numbers_spoken_and_written(words: str, value: float) -> None:
    assert parse_number(" ".join(t.norm for t in tokenize(words)).split()) == value


@pytest.mark.parametrize("words", ["five five", "twenty thirty", "cats", "hundred"])
def test_not_numbers(words: str) -> None:
    assert parse_number(words.split()) is None


def test_a_lower_threshold_is_looser(command_source: CommandSource) -> None:
    commands = command_source.commands()
    assert match_utterance("the search for meaning", commands) is None
    assert match_utterance("the search for meaning", commands, threshold=80) is not None
