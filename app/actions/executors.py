"""Doing what a command asks: one coroutine per action, each returning an Outcome.

Failures raise :class:`ActionError` with a plain-words message; the action center turns it
into a failed record. ``scratch``, ``edit`` and ``set_mode`` change the center's own state, which the
executor reaches through :class:`CenterControls`. The registry says which coroutine runs
which action.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from voxdesk.app.actions.answers import Question, RunningTimer, answer
from voxdesk.app.actions.keyboard import choose_keyboard
from voxdesk.app.actions.keys import parse_keys
from voxdesk.app.actions.kinds import ActionMode, SlotValue
from voxdesk.app.actions.launcher import normalize_url, search_url
from voxdesk.app.actions.ports import ActionError, Keyboard
from voxdesk.app.actions.services import Services
from voxdesk.app.settings import ActionSettings

__all__ = [
    "ActionRequest",
    "CenterControls",
    "Executor",
    "Outcome",
    "Undo",
    "check_option_injection",
    "expand_argv",
    "format_duration",
]

logger = logging.getLogger("voxdesk.actions")

Undo = Callable[[], Awaitable[str]]
_SLOT = re.compile(r"\{(\w+)\}")
_UNIT_SECONDS = {"seconds": 1, "minutes": 60, "hours": 3600}
_MAX_TIMER_S = 24 * 3600
_RUN_WAIT_S = 10.0


@dataclass
class Outcome:
    """What an action did (for the user) and how to take it back, if it can be."""

    message: str
    undo: Undo | None = None


@dataclass(frozen=True)
class ActionRequest:
    """What to do an action with: the slot values, and a ``run`` command's argument template."""

    values: Mapping[str, SlotValue]
    run: Sequence[str] = field(default_factory=tuple)


class CenterControls(Protocol):
    """The action center's own state that ``scratch`` and ``set_mode`` change."""

    @property
    def mode(self) -> ActionMode: ...

    def set_mode(self, mode: str) -> None: ...

    async def scratch(self) -> str: ...

    async def edit(self, instruction: str) -> Outcome: ...

    @property
    def hears_alarms(self) -> bool: ...

    def alarm(self, message: str) -> None: ...

    def expire_undo(self, undo: Undo) -> None: ...


def format_duration(n: SlotValue, unit: str) -> str:
    """``5, "minutes"`` → "5 minutes", ``1, "minutes"`` → "1 minute"."""
    number = f"{n:g}" if isinstance(n, float) else str(n)
    return f"{number} {unit.removesuffix('s') if number == '1' else unit}"


def expand_argv(template: Sequence[str], values: Mapping[str, SlotValue]) -> list[str]:
    """The argument list with slot values put in; each value stays inside its own argument."""
    return [_SLOT.sub(lambda m: str(values.get(m.group(1), "")), argument) for argument in template]


def check_option_injection(template: Sequence[str], argv: Sequence[str]) -> None:
    """Refuse a spoken value that would reach a program as an option ("--delete").

    Only arguments that are a whole slot (``"{text}"``) are checked, and only before a ``--``
    in the template: after it, programs read everything as plain arguments.
    """
    for index, (pattern, argument) in enumerate(zip(template, argv, strict=True)):
        if pattern == "--":
            return
        if index and _SLOT.fullmatch(pattern) and argument.startswith("-"):
            raise ActionError(
                f"refusing to pass {argument!r} to {argv[0]}: it would be read as an option "
                '(put "--" before the slot in the run list if the program accepts it)'
            )


class Executor:
    """Runs actions with the injected services."""

    def __init__(
        self,
        services: Services,
        settings: ActionSettings,
        center: CenterControls,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """``clock``: seconds since the epoch, for the answers about time and the timers."""
        self.services = services
        self.settings = settings
        self.center = center
        self._clock = clock
        self._timers: dict[asyncio.Task[None], RunningTimer] = {}

    def keyboard(self) -> Keyboard:
        """The typing backend (the injected one, or the one for this desktop, chosen once)."""
        if self.services.keyboard is None:
            self.services.keyboard = choose_keyboard()
        return self.services.keyboard

    async def open_app(self, request: ActionRequest) -> Outcome:
        """The ``open_app`` action."""
        values = request.values
        started = await self.services.launcher.launch(str(values["app"]))
        return Outcome(f"started {started}")

    async def open_url(self, request: ActionRequest) -> Outcome:
        """The ``open_url`` action."""
        values = request.values
        url = normalize_url(str(values["url"]))
        await self.services.open_url(url)
        return Outcome(f"opened {url}")

    async def search(self, request: ActionRequest) -> Outcome:
        """The ``search`` action."""
        values = request.values
        url = search_url(self.settings.search_url, str(values["query"]))
        await self.services.open_url(url)
        return Outcome(f"opened {url}")

    async def type(self, request: ActionRequest) -> Outcome:
        """The ``type`` action."""
        values = request.values
        text = str(values["text"])
        keyboard = self.keyboard()
        target = await keyboard.focused_window()
        await keyboard.type_text(text)

        async def undo() -> str:
            await keyboard.backspace(len(text))
            return f"removed {len(text)} characters"

        into = f" into “{target}”" if target else ""
        return Outcome(f"typed {len(text)} characters{into} with {keyboard.name}", undo)

    async def press(self, request: ActionRequest) -> Outcome:
        """The ``press`` action."""
        values = request.values
        combo = parse_keys(str(values["keys"]))
        if combo is None:
            raise ActionError(f"{values['keys']!r} is not a key combination")
        keyboard = self.keyboard()
        await keyboard.press(combo)
        return Outcome(f"pressed {combo}")

    async def copy(self, request: ActionRequest) -> Outcome:
        """The ``copy`` action."""
        values = request.values
        clipboard = self.services.clipboard
        if clipboard is None:
            raise ActionError("the clipboard is not available")
        text = str(values.get("text", ""))
        if not text:
            raise ActionError("there is nothing to copy yet")
        previous = clipboard.text()
        clipboard.set_text(text)

        async def undo() -> str:
            clipboard.set_text(previous)
            return "restored the previous clipboard content"

        return Outcome(f"copied {len(text)} characters", undo)

    async def timer(self, request: ActionRequest) -> Outcome:
        """The ``timer`` action."""
        values = request.values
        if self.services.notifier is None and not self.center.hears_alarms:
            raise ActionError("timers need desktop notifications, the window or spoken replies, and none is here")
        n, unit = values["n"], str(values["unit"])
        if isinstance(n, str) or unit not in _UNIT_SECONDS:
            raise ActionError(f"cannot set a timer for {n} {unit}")
        seconds = float(n) * _UNIT_SECONDS[unit]
        if not 0 < seconds <= _MAX_TIMER_S:
            raise ActionError("timers can run from one second to 24 hours")
        label = format_duration(n, unit)

        async def ring() -> None:
            await asyncio.sleep(seconds)
            logger.info("timer for %s went off", label)
            message = f"Your {label} timer is up"
            self.center.expire_undo(undo)
            self.center.alarm(message)
            notifier = self.services.notifier
            if notifier is None:
                return
            try:
                notifier.notify("Timer", message)
            except Exception:
                logger.exception("the %s timer went off but its notification failed", label)

        task = asyncio.create_task(ring())
        self._timers[task] = RunningTimer(label, self._clock() + seconds)
        task.add_done_callback(lambda done: self._timers.pop(done, None))

        async def undo() -> str:
            if task.done():
                raise ActionError("the timer has already gone off")
            task.cancel()
            self._timers.pop(task, None)  # no longer running, though its task ends a little later
            return "timer cancelled"

        return Outcome(f"timer set for {label}", undo)

    async def stop_listening(self, request: ActionRequest) -> Outcome:
        """The ``stop_listening`` action."""
        if self.services.stop_listening is None:
            raise ActionError("listening cannot be stopped from here")
        self.services.stop_listening()
        return Outcome("stopped listening")

    async def run(self, request: ActionRequest) -> Outcome:
        """The ``run`` action: the user's argument list with the slot values put in."""
        argv = expand_argv(request.run, request.values)
        check_option_injection(request.run, argv)
        result = await self.services.run_process(argv, wait_s=_RUN_WAIT_S)
        if result.returncode is None:
            return Outcome(f"started {argv[0]} (still running)")
        if result.returncode != 0:
            detail = f": {result.stderr.splitlines()[-1]}" if result.stderr else ""
            raise ActionError(f"{argv[0]} failed (exit status {result.returncode}){detail}")
        return Outcome(f"ran {argv[0]}")

    async def scratch(self, request: ActionRequest) -> Outcome:
        """The ``scratch`` action: remove the last typed text."""
        return Outcome(await self.center.scratch())

    async def edit(self, request: ActionRequest) -> Outcome:
        """The ``edit`` action: the selection in the focused app, or the last typed text, rewritten
        by the LLM as said (``how`` and ``change``)."""
        instruction = " ".join(str(request.values[key]) for key in ("how", "change") if key in request.values)
        return await self.center.edit(instruction)

    async def set_mode(self, request: ActionRequest) -> Outcome:
        """The ``set_mode`` action; undo switches back."""
        center, mode, previous = self.center, str(request.values["mode"]), self.center.mode
        center.set_mode(mode)

        async def undo() -> str:
            center.set_mode(previous)
            return f"back to {previous} mode"

        return Outcome(f"{mode} mode", undo)

    async def answer(self, request: ActionRequest) -> Outcome:
        """The ``answer`` action: the time, the date or the timers, from Voxdesk's own state."""
        try:
            question = Question(str(request.values["question"]))
        except ValueError:
            raise ActionError(f"cannot answer {request.values['question']!r}: one of {', '.join(Question)}") from None
        return Outcome(answer(question, self._clock(), self._timers.values()))

    def cancel_timers(self) -> None:
        """Cancel every pending timer (on shutdown)."""
        for task in self._timers:
            task.cancel()
        self._timers.clear()
