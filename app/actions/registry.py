"""The action registry: one entry per action, with the values it needs, its preview and its executor.

Adding a voice action is a member of :class:`~voxdesk.app.actions.kinds.Action`, an entry in
:data:`ACTIONS` and its coroutine on :class:`~voxdesk.app.actions.executors.Executor` (which
returns the undo, when there is one).
"""

from __future__ import annotations

import shlex
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

from voxdesk.app.actions.answers import Question
from voxdesk.app.actions.executors import ActionRequest, Executor, Outcome, expand_argv, format_duration
from voxdesk.app.actions.kinds import Action
from voxdesk.app.actions.launcher import normalize_url
from voxdesk.app.actions.ports import ActionError

__all__ = ["ACTIONS", "ActionEntry", "describe"]


@dataclass(frozen=True)
class ActionEntry:
    """What the action needs (from slots or static ``args``), how to preview it, and how to do it."""

    needs: frozenset[str]
    describe: Callable[[ActionRequest], str]
    execute: Callable[[Executor, ActionRequest], Awaitable[Outcome]]


def _short_text(request: ActionRequest) -> str:
    text = str(request.values.get("text", ""))
    return text if len(text) <= 60 else text[:57] + "…"


def _describe_open_url(request: ActionRequest) -> str:
    try:
        return f"Open {normalize_url(str(request.values['url']))}"
    except ActionError:
        return f"Open the website “{request.values['url']}”"


def _describe_copy(request: ActionRequest) -> str:
    short = _short_text(request)
    return f"Copy “{short}” to the clipboard" if short else "Copy the last text to the clipboard"


_QUESTIONS: dict[str, str] = {
    Question.TIME: "Say the time",
    Question.DATE: "Say the date",
    Question.TIMERS: "Say what is left of the timers",
}

ACTIONS: Mapping[Action, ActionEntry] = {
    Action.OPEN_APP: ActionEntry(
        frozenset({"app"}), lambda r: f"Open the application “{r.values['app']}”", Executor.open_app
    ),
    Action.OPEN_URL: ActionEntry(frozenset({"url"}), _describe_open_url, Executor.open_url),
    Action.SEARCH: ActionEntry(
        frozenset({"query"}), lambda r: f"Search the web for “{r.values['query']}”", Executor.search
    ),
    Action.TYPE: ActionEntry(frozenset({"text"}), lambda r: f"Type “{_short_text(r)}”", Executor.type),
    Action.PRESS: ActionEntry(frozenset({"keys"}), lambda r: f"Press {r.values['keys']}", Executor.press),
    Action.COPY: ActionEntry(frozenset(), _describe_copy, Executor.copy),
    Action.TIMER: ActionEntry(
        frozenset({"n", "unit"}),
        lambda r: f"Set a timer for {format_duration(r.values['n'], str(r.values['unit']))}",
        Executor.timer,
    ),
    Action.STOP_LISTENING: ActionEntry(frozenset(), lambda _: "Stop listening", Executor.stop_listening),
    Action.SCRATCH: ActionEntry(frozenset(), lambda _: "Remove the last typed text", Executor.scratch),
    Action.SET_MODE: ActionEntry(
        frozenset({"mode"}), lambda r: f"Switch to {r.values['mode']} mode", Executor.set_mode
    ),
    Action.ANSWER: ActionEntry(
        frozenset({"question"}),
        lambda r: _QUESTIONS.get(str(r.values["question"]), f"Answer {r.values['question']!r}"),
        Executor.answer,
    ),
    Action.EDIT: ActionEntry(
        frozenset({"how"}),
        lambda r: f"Rewrite the last text: {r.values['how']} {r.values.get('change', '')}".rstrip(),
        Executor.edit,
    ),
    Action.RUN: ActionEntry(frozenset(), lambda r: f"Run: {shlex.join(expand_argv(r.run, r.values))}", Executor.run),
}


def describe(action: Action, request: ActionRequest) -> str:
    """What ``action`` will do with ``request``, in plain words (the preview)."""
    return ACTIONS[action].describe(request)
