"""Requests of several steps ("open the terminal and type ls"): found, shown as a numbered plan,
and run in order once confirmed.

A step that starts something (an app, a web page, a program) and is followed by one that acts
on the focused window waits for the new window to take the focus first: typing "ls" into the
window that had the focus before the terminal appeared would be the wrong window. Windows are
told apart by their titles (what the typing backend reports), so a new window titled as the one
focused before is not seen: the plan then stops rather than type into either.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass

from voxdesk.app.actions.commands import Command
from voxdesk.app.actions.executors import ActionRequest, Executor, Outcome, Undo
from voxdesk.app.actions.kinds import Action
from voxdesk.app.actions.matching import Match, match_utterance
from voxdesk.app.actions.ports import ActionError
from voxdesk.app.actions.registry import ACTIONS

__all__ = ["FOCUS_WAIT_S", "Plan", "PlanStep", "match_plan", "split_steps"]

FOCUS_WAIT_S = 10.0
"""How long a started app has to take the focus before the plan stops short of typing into it."""

UNTOLD_FOCUS_WAIT_S = 2.0
"""Where the desktop does not tell which window has the focus (Wayland): a guess at how long an
app takes to open, the only thing left to wait on."""

_POLL_S = 0.1
_STARTS = frozenset({Action.OPEN_APP, Action.OPEN_URL, Action.SEARCH, Action.RUN})
_ON_FOCUSED_WINDOW = frozenset({Action.TYPE, Action.PRESS, Action.EDIT, Action.SCRATCH})
_JOINS = re.compile(r"\s*,?\s+(?:and then|and|then)\s+|\s*,\s*then\s+", re.IGNORECASE)


def split_steps(text: str) -> list[str]:
    """The parts of ``text`` between "and", "then", "and then" (one part when there is none)."""
    return [part for part in (p.strip(" ,.") for p in _JOINS.split(text)) if part]


def match_plan(text: str, commands: Sequence[Command], threshold: float) -> list[Match] | None:
    """One command per part of ``text`` when it has several parts and every one matches; else None
    (then "type salt and pepper" is one step that types "salt and pepper")."""
    parts = split_steps(text)
    if len(parts) < 2:
        return None
    found = [match_utterance(part, commands, threshold=threshold) for part in parts]
    return [match for match in found if match is not None] if None not in found else None


@dataclass(frozen=True)
class PlanStep:
    """One step: its action, what it is given, and what it does in plain words."""

    action: Action
    request: ActionRequest
    preview: str


@dataclass(frozen=True)
class Plan:
    """Steps run in order; the first that fails stops the rest."""

    steps: tuple[PlanStep, ...]

    @property
    def preview(self) -> str:
        """The plan as the window shows it before it runs: "1. Open Terminal; 2. Type “ls”"."""
        return "; ".join(f"{number}. {step.preview}" for number, step in enumerate(self.steps, 1))

    async def run(self, executor: Executor) -> Outcome:
        """Run every step; its undo takes back, last first, the steps that can be undone."""
        done: list[tuple[PlanStep, Undo | None]] = []
        messages: list[str] = []
        for number, step in enumerate(self.steps, 1):
            follower = self.steps[number] if number < len(self.steps) else None
            waits = step.action in _STARTS and follower is not None and follower.action in _ON_FOCUSED_WINDOW
            try:
                before = await executor.keyboard().focused_window() if waits else None
                outcome = await ACTIONS[step.action].execute(executor, step.request)
                done.append((step, outcome.undo))
                messages.append(f"{number}. {outcome.message}")
                if waits:
                    messages[-1] += await _wait_for_new_focus(executor, before)
            except ActionError as error:
                ran = f" (done: {'; '.join(messages)})" if messages else ""
                raise ActionError(f"step {number}, {step.preview}: {error}{ran}") from None
        undos = [(step, undo) for step, undo in done if undo is not None]
        if not undos:
            return Outcome("; ".join(messages))

        async def undo() -> str:
            for _, step_undo in reversed(undos):
                await step_undo()
            return "took back " + "; ".join(step.preview for step, _ in undos)

        return Outcome("; ".join(messages), undo)


async def _wait_for_new_focus(executor: Executor, before: str | None) -> str:
    """Wait until another window than ``before`` (its title; None: the desktop does not tell)
    has the focus; a note for the step's message."""
    keyboard = executor.keyboard()
    if before is None:
        await asyncio.sleep(UNTOLD_FOCUS_WAIT_S)
        return f" (waited {UNTOLD_FOCUS_WAIT_S:g} s: this desktop does not tell which window has the focus)"
    deadline = time.monotonic() + FOCUS_WAIT_S
    while (now := await keyboard.focused_window()) == before:
        if time.monotonic() >= deadline:
            raise ActionError(f"no new window took the focus within {FOCUS_WAIT_S:g} s, so nothing was typed")
        await asyncio.sleep(_POLL_S)  # the window system announces no focus change to us
    return f" (“{now}” has the focus)"
