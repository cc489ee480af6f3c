"""Typing one utterance as it grows: what it typed so far is brought to each new target with the
fewest keystrokes (BackSpace for what differs after the common prefix, then the rest).

That one rule covers a committed word appended, a retraction (a failover's ``TextRetracted``
empties the target), a replacement or spoken punctuation that changes earlier words once the
next word comes, the final text, an utterance that turned out to be a command (target ``""``)
and "scratch that". Targets asked for while keys are being sent are merged: only the newest is typed.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from voxdesk.app.actions.ports import ActionError, Keyboard

__all__ = ["LiveTyper", "keystrokes"]


def keystrokes(typed: str, target: str) -> tuple[int, str]:
    """How many BackSpaces, then which text, turn ``typed`` into ``target``."""
    pairs = enumerate(zip(typed, target, strict=False))
    common = next((i for i, (a, b) in pairs if a != b), min(len(typed), len(target)))
    return len(typed) - common, target[common:]


class LiveTyper:
    """What one utterance typed into the focused field, kept in step with the newest target."""

    def __init__(self, keyboard: Keyboard, clock: Callable[[], float] = time.perf_counter) -> None:
        self.keyboard = keyboard
        self.typed = ""  # what the field got from this utterance, as far as the keystrokes went
        self.latencies: list[float] = []  # seconds from a target asked for to its keystrokes sent
        self._clock = clock
        self._wanted = ""
        self._asked_at: float | None = None
        self._worker: asyncio.Task[None] | None = None
        self._error: ActionError | None = None

    def want(self, target: str) -> None:
        """Type toward ``target`` now (in the background); earlier targets not reached yet are dropped."""
        if target == self._wanted:
            return
        self._wanted = target
        if self._asked_at is None:
            self._asked_at = self._clock()
        if self._worker is None or self._worker.done():
            self._worker = asyncio.ensure_future(self._work())

    async def settle(self) -> str:
        """Wait until the field holds the newest target; returns it. ActionError when keys failed."""
        while self._worker is not None and not self._worker.done():
            await asyncio.shield(self._worker)
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        return self.typed

    async def _work(self) -> None:
        while self.typed != self._wanted:
            target, asked_at, self._asked_at = self._wanted, self._asked_at, None
            erase, text = keystrokes(self.typed, target)
            try:
                if erase:
                    await self.keyboard.backspace(erase)
                    self.typed = self.typed[: len(self.typed) - erase]
                if text:
                    await self.keyboard.type_text(text)
                    self.typed += text
            except ActionError as error:
                # The field holds an unknown part of the text: stop here and say so once.
                self._error, self._wanted = error, self.typed
                return
            if asked_at is not None:
                self.latencies.append(self._clock() - asked_at)
