"""Doing what a command asks: one coroutine per action, each returning an Outcome.

Failures raise :class:`ActionError` with a plain-words message; the action center turns it
into a failed record. ``scratch`` and ``set_mode`` change the center's own state and live
there.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass

from voxdesk.app.actions.keyboard import Keyboard, choose_keyboard
from voxdesk.app.actions.keys import parse_keys
from voxdesk.app.actions.launcher import normalize_url, search_url
from voxdesk.app.actions.matching import SlotValue
from voxdesk.app.actions.services import ActionError, Services
from voxdesk.app.settings import ActionSettings

__all__ = ["Executor", "Outcome", "check_option_injection", "expand_argv", "format_duration"]

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

    def __init__(self, services: Services, settings: ActionSettings) -> None:
        self.services = services
        self.settings = settings
        self._timers: set[asyncio.Task[None]] = set()

    def keyboard(self) -> Keyboard:
        """The typing backend (the injected one, or the one for this desktop, chosen once)."""
        if self.services.keyboard is None:
            self.services.keyboard = choose_keyboard()
        return self.services.keyboard

    async def run(self, action: str, values: Mapping[str, SlotValue], argv: Sequence[str] | None = None) -> Outcome:
        """Do ``action`` with ``values``; raises ActionError when it cannot."""
        handler = getattr(self, f"_do_{action}", None)
        if handler is None:
            raise ActionError(f"unknown action {action!r}")
        if action == "run":
            return await self._do_run(argv or [], values)
        outcome: Outcome = await handler(values)
        return outcome

    async def _do_open_app(self, values: Mapping[str, SlotValue]) -> Outcome:
        started = await self.services.launcher.launch(str(values["app"]))
        return Outcome(f"started {started}")

    async def _do_open_url(self, values: Mapping[str, SlotValue]) -> Outcome:
        url = normalize_url(str(values["url"]))
        await asyncio.to_thread(self.services.open_url, url)
        return Outcome(f"opened {url}")

    async def _do_search(self, values: Mapping[str, SlotValue]) -> Outcome:
        url = search_url(self.settings.search_url, str(values["query"]))
        await asyncio.to_thread(self.services.open_url, url)
        return Outcome(f"opened {url}")

    async def _do_type(self, values: Mapping[str, SlotValue]) -> Outcome:
        text = str(values["text"])
        keyboard = self.keyboard()
        await keyboard.type_text(text)

        async def undo() -> str:
            await keyboard.backspace(len(text))
            return f"removed {len(text)} characters"

        return Outcome(f"typed {len(text)} characters with {keyboard.name}", undo)

    async def _do_press(self, values: Mapping[str, SlotValue]) -> Outcome:
        combo = parse_keys(str(values["keys"]))
        if combo is None:
            raise ActionError(f"{values['keys']!r} is not a key combination")
        keyboard = self.keyboard()
        await keyboard.press(combo)
        return Outcome(f"pressed {combo}")

    async def _do_copy(self, values: Mapping[str, SlotValue]) -> Outcome:
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

    async def _do_timer(self, values: Mapping[str, SlotValue]) -> Outcome:
        notifier = self.services.notifier
        if notifier is None:
            raise ActionError("timers need desktop notifications, which are not available")
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
            try:
                notifier.notify("Timer", f"Your {label} timer is up")
            except Exception:
                logger.exception("the %s timer went off but its notification failed", label)

        task = asyncio.create_task(ring())
        self._timers.add(task)
        task.add_done_callback(self._timers.discard)

        async def undo() -> str:
            if task.done():
                raise ActionError("the timer has already gone off")
            task.cancel()
            return "timer cancelled"

        return Outcome(f"timer set for {label}", undo)

    async def _do_stop_listening(self, values: Mapping[str, SlotValue]) -> Outcome:
        if self.services.stop_listening is None:
            raise ActionError("listening cannot be stopped from here")
        self.services.stop_listening()
        return Outcome("stopped listening")

    async def _do_run(self, template: Sequence[str], values: Mapping[str, SlotValue]) -> Outcome:
        argv = expand_argv(template, values)
        check_option_injection(template, argv)
        result = await self.services.run_process(argv, wait_s=_RUN_WAIT_S)
        if result.returncode is None:
            return Outcome(f"started {argv[0]} (still running)")
        if result.returncode != 0:
            detail = f": {result.stderr.splitlines()[-1]}" if result.stderr else ""
            raise ActionError(f"{argv[0]} failed (exit status {result.returncode}){detail}")
        return Outcome(f"ran {argv[0]}")

    def cancel_timers(self) -> None:
        """Cancel every pending timer (on shutdown)."""
        for task in list(self._timers):
            task.cancel()
