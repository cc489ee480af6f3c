"""The action registry: every action has one entry, with a preview and an executor; the enums match the files."""

from __future__ import annotations

import inspect

import pytest

from voxdesk.app.actions.executors import ActionRequest, Executor
from voxdesk.app.actions.kinds import Action, ActionMode, SlotValue
from voxdesk.app.actions.registry import ACTIONS, describe
from voxdesk.app.settings import ACTION_MODES

# Values each action's preview can be written from.
SAMPLE: dict[str, SlotValue] = {
    "app": "firefox",
    "url": "example dot com",
    "query": "weather",
    "text": "hello",
    "keys": "control c",
    "n": 5,
    "unit": "minutes",
    "mode": "dictation",
    "question": "time",
    "how": "Make it",
}


COMMAND_ACTIONS = [action for action in Action if action is not Action.PLAN]  # a plan is made of commands


def test_every_action_of_a_command_has_an_entry() -> None:
    assert set(ACTIONS) == set(COMMAND_ACTIONS)


@pytest.mark.parametrize("action", COMMAND_ACTIONS)
def test_every_entry_has_a_description_and_an_executor(action: Action) -> None:
    entry = ACTIONS[action]
    assert entry.needs <= set(SAMPLE)
    preview = describe(action, ActionRequest(SAMPLE, ("echo", "{text}")))
    assert preview.strip() and preview != action.value
    executor = getattr(Executor, entry.execute.__name__, None)
    assert executor is entry.execute and inspect.iscoroutinefunction(executor)


def test_previews_read_as_before() -> None:
    assert describe(Action.OPEN_URL, ActionRequest({"url": "example dot com"})) == "Open https://example.com"
    assert describe(Action.COPY, ActionRequest({"text": ""})) == "Copy the last text to the clipboard"
    assert describe(Action.TIMER, ActionRequest({"n": 1, "unit": "minutes"})) == "Set a timer for 1 minute"
    assert describe(Action.RUN, ActionRequest({"text": "a b"}, ("echo", "{text}"))) == "Run: echo 'a b'"


def test_action_modes_are_the_settings_choices() -> None:
    assert tuple(ActionMode) == ACTION_MODES
